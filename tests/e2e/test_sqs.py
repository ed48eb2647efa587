"""SQS end to end: boto3 (JSON protocol), the AWS CLI, and raw query-protocol form POSTs."""
import base64
import hashlib
import json
import os
import struct
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import xml.etree.ElementTree as ET

import pytest
from botocore.exceptions import ClientError

NS = {"q": "http://queue.amazonaws.com/doc/2012-11-05/"}


def uniq(prefix="q"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def sqs(cumulo):
    return cumulo.client("sqs")


def error_code(excinfo):
    return excinfo.value.response["Error"]["Code"]


def md5_of_attributes(attrs):
    """AWS's MD5OfMessageAttributes, written from the SQS developer guide, independent of cumulo."""
    h = hashlib.md5()

    def put(b):
        h.update(struct.pack("!I", len(b)))
        h.update(b)

    for name in sorted(attrs):
        a = attrs[name]
        put(name.encode())
        put(a["DataType"].encode())
        if "StringValue" in a:
            h.update(b"\x01")
            put(a["StringValue"].encode())
        else:
            h.update(b"\x02")
            put(a["BinaryValue"])
    return h.hexdigest()


# ---------------------------------------------------------------- queues


def test_create_get_list_delete(cumulo, sqs):
    prefix = uniq("life")
    urls = [sqs.create_queue(QueueName=f"{prefix}-{i}")["QueueUrl"] for i in range(3)]
    assert urls[0] == f"{cumulo.endpoint}/000000000000/{prefix}-0"
    assert sqs.get_queue_url(QueueName=f"{prefix}-1")["QueueUrl"] == urls[1]
    listed = sqs.list_queues(QueueNamePrefix=prefix)["QueueUrls"]
    assert sorted(listed) == sorted(urls)
    # Pagination: MaxResults pages with a token until exhausted.
    page1 = sqs.list_queues(QueueNamePrefix=prefix, MaxResults=2)
    assert len(page1["QueueUrls"]) == 2 and page1["NextToken"]
    page2 = sqs.list_queues(QueueNamePrefix=prefix, MaxResults=2, NextToken=page1["NextToken"])
    assert len(page2["QueueUrls"]) == 1 and "NextToken" not in page2
    assert sorted(page1["QueueUrls"] + page2["QueueUrls"]) == sorted(urls)
    sqs.delete_queue(QueueUrl=urls[0])
    with pytest.raises(ClientError) as e:
        sqs.get_queue_url(QueueName=f"{prefix}-0")
    assert error_code(e) == "AWS.SimpleQueueService.NonExistentQueue"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.send_message(QueueUrl=urls[0], MessageBody="x")
    assert sqs.list_queues(QueueNamePrefix=f"{prefix}-0").get("QueueUrls") is None


def test_create_queue_is_idempotent_and_detects_conflicts(sqs):
    name = uniq("idem")
    url = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "45"})["QueueUrl"]
    assert sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "45"})["QueueUrl"] == url
    assert sqs.create_queue(QueueName=name)["QueueUrl"] == url
    with pytest.raises(ClientError) as e:
        sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "46"})
    assert error_code(e) == "QueueAlreadyExists"
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
    assert attrs["Attributes"] == {"VisibilityTimeout": "45"}


@pytest.mark.parametrize("name", ["", "a" * 81, "bad name", "x.fifo.y", "dots.in.name"])
def test_invalid_queue_names(sqs, name):
    with pytest.raises(ClientError) as e:
        sqs.create_queue(QueueName=name)
    assert error_code(e) in ("InvalidParameterValue", "MissingParameter")


def test_standard_queue_attributes_and_defaults(sqs):
    before = int(time.time())
    url = sqs.create_queue(QueueName=uniq("attrs"))["QueueUrl"]
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert a["QueueArn"] == f"arn:aws:sqs:us-east-1:000000000000:{url.rsplit('/', 1)[1]}"
    assert a["VisibilityTimeout"] == "30"
    assert a["MaximumMessageSize"] == "1048576"
    assert a["MessageRetentionPeriod"] == "345600"
    assert a["DelaySeconds"] == "0"
    assert a["ReceiveMessageWaitTimeSeconds"] == "0"
    assert a["SqsManagedSseEnabled"] == "true"
    for k in ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
              "ApproximateNumberOfMessagesDelayed"):
        assert a[k] == "0"
    assert before <= int(a["CreatedTimestamp"]) <= time.time() + 1
    assert "FifoQueue" not in a and "ContentBasedDeduplication" not in a
    policy = json.dumps({"Version": "2012-10-17", "Statement": []})
    sqs.set_queue_attributes(QueueUrl=url, Attributes={
        "VisibilityTimeout": "120", "DelaySeconds": "5", "Policy": policy,
        "KmsMasterKeyId": "alias/aws/sqs",
    })
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert a["VisibilityTimeout"] == "120" and a["DelaySeconds"] == "5"
    assert json.loads(a["Policy"]) == json.loads(policy)
    assert a["KmsMasterKeyId"] == "alias/aws/sqs"
    assert a["KmsDataKeyReusePeriodSeconds"] == "300"
    assert a["SqsManagedSseEnabled"] == "false"
    only = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["DelaySeconds", "QueueArn"])
    assert set(only["Attributes"]) == {"DelaySeconds", "QueueArn"}
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert "Policy" not in a


def test_fifo_queue_attributes(sqs):
    url = sqs.create_queue(QueueName=uniq("fattrs") + ".fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert a["FifoQueue"] == "true"
    assert a["ContentBasedDeduplication"] == "false"
    assert a["DeduplicationScope"] == "queue"
    assert a["FifoThroughputLimit"] == "perQueue"
    sqs.set_queue_attributes(QueueUrl=url, Attributes={
        "DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"})
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["FifoThroughputLimit"])["Attributes"]
    assert a == {"FifoThroughputLimit": "perMessageGroupId"}


@pytest.mark.parametrize("attrs,code", [
    ({"VisibilityTimeout": "43201"}, "InvalidAttributeValue"),
    ({"VisibilityTimeout": "-1"}, "InvalidAttributeValue"),
    ({"MaximumMessageSize": "1023"}, "InvalidAttributeValue"),
    ({"MessageRetentionPeriod": "59"}, "InvalidAttributeValue"),
    ({"DelaySeconds": "901"}, "InvalidAttributeValue"),
    ({"ReceiveMessageWaitTimeSeconds": "21"}, "InvalidAttributeValue"),
    ({"Policy": "not json"}, "InvalidAttributeValue"),
    ({"Bogus": "1"}, "InvalidAttributeName"),
    ({"QueueArn": "arn"}, "InvalidAttributeName"),
    ({"ContentBasedDeduplication": "true"}, "InvalidAttributeName"),
    ({"RedrivePolicy": '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:nope","maxReceiveCount":3}'},
     "InvalidParameterValue"),
    ({"RedrivePolicy": '{"maxReceiveCount":3}'}, "InvalidParameterValue"),
])
def test_attribute_validation(sqs, attrs, code):
    url = sqs.create_queue(QueueName=uniq("val"))["QueueUrl"]
    with pytest.raises(ClientError) as e:
        sqs.set_queue_attributes(QueueUrl=url, Attributes=attrs)
    assert error_code(e) == code
    with pytest.raises(ClientError) as e:
        sqs.create_queue(QueueName=uniq("val"), Attributes=attrs)
    assert error_code(e) == code
    # Nothing changed.
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert a["VisibilityTimeout"] == "30" and "RedrivePolicy" not in a


def test_unknown_attribute_name_on_get(sqs):
    url = sqs.create_queue(QueueName=uniq("getbad"))["QueueUrl"]
    with pytest.raises(ClientError) as e:
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Nope"])
    assert error_code(e) == "InvalidAttributeName"


def test_fifo_name_and_flag_must_agree(sqs):
    with pytest.raises(ClientError) as e:
        sqs.create_queue(QueueName=uniq("nofifo"), Attributes={"FifoQueue": "true"})
    assert error_code(e) == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        sqs.create_queue(QueueName=uniq("flagless") + ".fifo")
    assert error_code(e) == "InvalidParameterValue"


def test_tags(sqs):
    url = sqs.create_queue(QueueName=uniq("tags"), tags={"team": "a", "env": "dev"})["QueueUrl"]
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "a", "env": "dev"}
    sqs.tag_queue(QueueUrl=url, Tags={"env": "prod", "cost": "1"})
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "a", "env": "prod", "cost": "1"}
    sqs.untag_queue(QueueUrl=url, TagKeys=["team", "missing"])
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"env": "prod", "cost": "1"}
    with pytest.raises(ClientError) as e:
        sqs.tag_queue(QueueUrl=url, Tags={f"k{i}": "v" for i in range(50)})
    assert error_code(e) == "InvalidParameterValue"
    assert len(sqs.list_queue_tags(QueueUrl=url)["Tags"]) == 2


# ---------------------------------------------------------------- messages


def test_send_receive_with_exact_md5s(sqs):
    url = sqs.create_queue(QueueName=uniq("md5"))["QueueUrl"]
    attrs = {
        "s": {"DataType": "String", "StringValue": "héllo wörld"},
        "n": {"DataType": "Number", "StringValue": "-12.5e3"},
        "b": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xff"},
        "custom": {"DataType": "String.json", "StringValue": '{"a":1}'},
    }
    body = "body ✓ <xml> & \"quotes\""
    sent = sqs.send_message(QueueUrl=url, MessageBody=body, MessageAttributes=attrs)
    assert sent["MD5OfMessageBody"] == hashlib.md5(body.encode()).hexdigest()
    assert sent["MD5OfMessageAttributes"] == md5_of_attributes(attrs)
    msgs = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"], AttributeNames=["All"])["Messages"]
    assert len(msgs) == 1
    m = msgs[0]
    assert m["MessageId"] == sent["MessageId"]
    assert m["Body"] == body
    assert m["MD5OfBody"] == sent["MD5OfMessageBody"]
    assert m["MessageAttributes"] == attrs
    assert m["MD5OfMessageAttributes"] == md5_of_attributes(attrs)
    assert m["Attributes"]["ApproximateReceiveCount"] == "1"
    assert m["Attributes"]["SenderId"]
    sent_ts = int(m["Attributes"]["SentTimestamp"])
    assert abs(sent_ts / 1000 - time.time()) < 30
    assert int(m["Attributes"]["ApproximateFirstReceiveTimestamp"]) >= sent_ts


def test_message_attribute_and_system_attribute_selection(sqs):
    url = sqs.create_queue(QueueName=uniq("sel"))["QueueUrl"]
    attrs = {n: {"DataType": "String", "StringValue": n} for n in ("foo.a", "foo.b", "bar", "foox")}
    sqs.send_message(QueueUrl=url, MessageBody="x", MessageAttributes=attrs,
                     MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-abc"}})
    m = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["foo.*", "bar"],
                            MessageSystemAttributeNames=["SentTimestamp", "AWSTraceHeader"],
                            VisibilityTimeout=0)["Messages"][0]
    assert set(m["MessageAttributes"]) == {"foo.a", "foo.b", "bar"}
    assert m["MD5OfMessageAttributes"] == md5_of_attributes({k: attrs[k] for k in ("foo.a", "foo.b", "bar")})
    assert set(m["Attributes"]) == {"SentTimestamp", "AWSTraceHeader"}
    assert m["Attributes"]["AWSTraceHeader"] == "Root=1-abc"
    m = sqs.receive_message(QueueUrl=url)["Messages"][0]
    assert "MessageAttributes" not in m and "Attributes" not in m
    assert "MD5OfMessageAttributes" not in m


@pytest.mark.parametrize("attrs", [
    {"AWS.reserved": {"DataType": "String", "StringValue": "x"}},
    {"ok": {"DataType": "Strange", "StringValue": "x"}},
    {"ok": {"DataType": "Number", "StringValue": "abc"}},
    {"ok": {"DataType": "Number", "StringValue": "NaN"}},
    {"ok": {"DataType": "Number", "StringValue": "inf"}},
    {"ok": {"DataType": "String", "StringValue": ""}},
    {f"a{i}": {"DataType": "String", "StringValue": "x"} for i in range(11)},
])
def test_invalid_message_attributes(sqs, attrs):
    url = sqs.create_queue(QueueName=uniq("badattr"))["QueueUrl"]
    with pytest.raises(ClientError) as e:
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageAttributes=attrs)
    assert error_code(e) == "InvalidParameterValue"
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


def test_message_validation(sqs):
    url = sqs.create_queue(QueueName=uniq("msgval"), Attributes={"MaximumMessageSize": "1024"})["QueueUrl"]
    with pytest.raises(ClientError) as e:
        sqs.send_message(QueueUrl=url, MessageBody="x" * 1025)
    assert error_code(e) == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        sqs.send_message(QueueUrl=url, MessageBody="bad \x01 char")
    assert error_code(e) == "InvalidMessageContents"
    with pytest.raises(ClientError) as e:
        sqs.send_message(QueueUrl=url, MessageBody="x", DelaySeconds=901)
    assert error_code(e) == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageDeduplicationId="d")
    assert error_code(e) == "InvalidParameterValue"
    for params, code in [({"MaxNumberOfMessages": 11}, "InvalidParameterValue"),
                         ({"MaxNumberOfMessages": 0}, "InvalidParameterValue"),
                         ({"WaitTimeSeconds": 21}, "InvalidParameterValue"),
                         ({"VisibilityTimeout": 43201}, "InvalidParameterValue")]:
        with pytest.raises(ClientError) as e:
            sqs.receive_message(QueueUrl=url, **params)
        assert error_code(e) == code, params


def test_max_number_of_messages_and_counts(sqs):
    url = sqs.create_queue(QueueName=uniq("many"))["QueueUrl"]
    for i in range(15):
        sqs.send_message(QueueUrl=url, MessageBody=f"m{i}")
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert len(got) == 10
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert a["ApproximateNumberOfMessages"] == "5"
    assert a["ApproximateNumberOfMessagesNotVisible"] == "10"
    rest = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert len(rest) == 5
    assert {m["Body"] for m in got + rest} == {f"m{i}" for i in range(15)}


def test_visibility_timeout_expiry(sqs):
    url = sqs.create_queue(QueueName=uniq("vis"), Attributes={"VisibilityTimeout": "1"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="again")
    first = sqs.receive_message(QueueUrl=url, AttributeNames=["ApproximateReceiveCount"])["Messages"][0]
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    time.sleep(1.2)
    second = sqs.receive_message(QueueUrl=url, AttributeNames=["ApproximateReceiveCount"])["Messages"][0]
    assert second["MessageId"] == first["MessageId"]
    assert second["ReceiptHandle"] != first["ReceiptHandle"]
    assert second["Attributes"]["ApproximateReceiveCount"] == "2"


def test_change_message_visibility(sqs):
    url = sqs.create_queue(QueueName=uniq("chvis"))["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x")
    m = sqs.receive_message(QueueUrl=url)["Messages"][0]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    m2 = sqs.receive_message(QueueUrl=url, VisibilityTimeout=60)["Messages"][0]
    assert m2["MessageId"] == m["MessageId"]
    with pytest.raises(ClientError) as e:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m2["ReceiptHandle"], VisibilityTimeout=43201)
    assert error_code(e) == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle="garbage", VisibilityTimeout=10)
    assert error_code(e) == "ReceiptHandleIsInvalid"
    r = sqs.change_message_visibility_batch(QueueUrl=url, Entries=[
        {"Id": "ok", "ReceiptHandle": m2["ReceiptHandle"], "VisibilityTimeout": 0},
        {"Id": "bad", "ReceiptHandle": "garbage", "VisibilityTimeout": 0},
    ])
    assert [s["Id"] for s in r["Successful"]] == ["ok"]
    assert r["Failed"][0]["Id"] == "bad" and r["Failed"][0]["Code"] == "ReceiptHandleIsInvalid"
    assert r["Failed"][0]["SenderFault"] is True
    # Visible again, so no longer in flight: changing it is refused.
    with pytest.raises(ClientError) as e:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m2["ReceiptHandle"], VisibilityTimeout=5)
    assert error_code(e) == "AWS.SimpleQueueService.MessageNotInflight"


def test_delete_message_and_batch(sqs):
    url = sqs.create_queue(QueueName=uniq("del"))["QueueUrl"]
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=str(i))
    msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=3, VisibilityTimeout=0)["Messages"]
    assert len(msgs) == 3
    sqs.delete_message(QueueUrl=url, ReceiptHandle=msgs[0]["ReceiptHandle"])
    sqs.delete_message(QueueUrl=url, ReceiptHandle=msgs[0]["ReceiptHandle"])  # already gone: fine
    with pytest.raises(ClientError) as e:
        sqs.delete_message(QueueUrl=url, ReceiptHandle="not-a-handle")
    assert error_code(e) == "ReceiptHandleIsInvalid"
    r = sqs.delete_message_batch(QueueUrl=url, Entries=[
        {"Id": "a", "ReceiptHandle": msgs[1]["ReceiptHandle"]},
        {"Id": "b", "ReceiptHandle": msgs[2]["ReceiptHandle"]},
        {"Id": "c", "ReceiptHandle": "junk"},
    ])
    assert sorted(s["Id"] for s in r["Successful"]) == ["a", "b"]
    assert [(f["Id"], f["Code"]) for f in r["Failed"]] == [("c", "ReceiptHandleIsInvalid")]
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert a["ApproximateNumberOfMessages"] == "0" and a["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_only_the_latest_receipt_handle_deletes(sqs):
    url = sqs.create_queue(QueueName=uniq("stale"))["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x")
    old = sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)["Messages"][0]["ReceiptHandle"]
    new = sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)["Messages"][0]["ReceiptHandle"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=old)  # succeeds, deletes nothing
    assert sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)["Messages"][0]["Body"] == "x"
    newest = sqs.receive_message(QueueUrl=url)["Messages"][0]["ReceiptHandle"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=new)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=newest)
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert a["ApproximateNumberOfMessages"] == "0" and a["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_send_message_batch(sqs):
    url = sqs.create_queue(QueueName=uniq("sbatch"))["QueueUrl"]
    attrs = {"k": {"DataType": "Number", "StringValue": "7"}}
    r = sqs.send_message_batch(QueueUrl=url, Entries=[
        {"Id": "one", "MessageBody": "1", "MessageAttributes": attrs},
        {"Id": "two", "MessageBody": "2", "DelaySeconds": 0},
        {"Id": "bad", "MessageBody": "3", "MessageAttributes": {"k": {"DataType": "Number", "StringValue": "x"}}},
    ])
    ok = {s["Id"]: s for s in r["Successful"]}
    assert set(ok) == {"one", "two"}
    assert ok["one"]["MD5OfMessageBody"] == hashlib.md5(b"1").hexdigest()
    assert ok["one"]["MD5OfMessageAttributes"] == md5_of_attributes(attrs)
    assert "MD5OfMessageAttributes" not in ok["two"]
    assert r["Failed"][0]["Id"] == "bad" and r["Failed"][0]["Code"] == "InvalidParameterValue"
    bodies = sorted(m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"])
    assert bodies == ["1", "2"]


@pytest.mark.parametrize("entries,code", [
    ([], "AWS.SimpleQueueService.EmptyBatchRequest"),
    ([{"Id": f"e{i}", "MessageBody": "x"} for i in range(11)], "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"),
    ([{"Id": "same", "MessageBody": "x"}, {"Id": "same", "MessageBody": "y"}], "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"),
    ([{"Id": "bad id!", "MessageBody": "x"}], "AWS.SimpleQueueService.InvalidBatchEntryId"),
])
def test_batch_request_errors(sqs, entries, code):
    url = sqs.create_queue(QueueName=uniq("batcherr"))["QueueUrl"]
    with pytest.raises(ClientError) as e:
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert error_code(e) == code
    with pytest.raises(ClientError) as e:
        sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": x["Id"], "ReceiptHandle": "h"} for x in entries])
    assert error_code(e) == code
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


def test_delay_seconds(sqs):
    url = sqs.create_queue(QueueName=uniq("delay"), Attributes={"DelaySeconds": "1"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="queue-delay")
    sqs.send_message(QueueUrl=url, MessageBody="no-delay", DelaySeconds=0)
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesDelayed"])
    assert a["Attributes"]["ApproximateNumberOfMessagesDelayed"] == "1"
    first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in first] == ["no-delay"]
    # A long poll wakes when the delayed message becomes visible (~1 s), not at the end of its
    # 20 s wait: the bound only has to tell the two apart, with room for a loaded machine.
    t = time.time()
    later = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20)["Messages"]
    assert [m["Body"] for m in later] == ["queue-delay"]
    assert time.time() - t < 10


def test_long_poll_waits_when_empty(sqs):
    url = sqs.create_queue(QueueName=uniq("lpempty"))["QueueUrl"]
    t = time.time()
    r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)
    elapsed = time.time() - t
    assert "Messages" not in r
    assert 0.9 <= elapsed < 10


def test_long_poll_uses_queue_default_wait(sqs):
    url = sqs.create_queue(QueueName=uniq("lpdef"), Attributes={"ReceiveMessageWaitTimeSeconds": "1"})["QueueUrl"]
    t = time.time()
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    assert time.time() - t >= 0.9


def test_long_poll_woken_by_send(cumulo, sqs):
    url = sqs.create_queue(QueueName=uniq("lpwake"))["QueueUrl"]
    sender = cumulo.client("sqs")

    def send_later():
        time.sleep(0.7)
        sender.send_message(QueueUrl=url, MessageBody="wake")

    th = threading.Thread(target=send_later)
    t = time.time()
    th.start()
    r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20)
    elapsed = time.time() - t
    th.join()
    assert [m["Body"] for m in r["Messages"]] == ["wake"]
    # Woken by the send (~0.7 s), not at the end of the 20 s wait.
    assert 0.6 <= elapsed < 10


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_long_polls_do_not_busy_wait(cumulo):
    url = cumulo.client("sqs").create_queue(QueueName=uniq("idle"))["QueueUrl"]
    clients = [cumulo.client("sqs") for _ in range(4)]
    before = cpu_seconds(cumulo.proc.pid)
    threads = [threading.Thread(target=c.receive_message, kwargs={"QueueUrl": url, "WaitTimeSeconds": 2})
               for c in clients]
    [t.start() for t in threads]
    [t.join() for t in threads]
    # Four 2-second polls; a spinning server would burn seconds of CPU here.
    assert cpu_seconds(cumulo.proc.pid) - before < 0.5


def test_purge_queue(sqs):
    url = sqs.create_queue(QueueName=uniq("purge"))["QueueUrl"]
    for i in range(4):
        sqs.send_message(QueueUrl=url, MessageBody=str(i))
    sqs.purge_queue(QueueUrl=url)
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    with pytest.raises(ClientError) as e:
        sqs.purge_queue(QueueUrl=url)
    assert error_code(e) == "AWS.SimpleQueueService.PurgeQueueInProgress"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    sqs.send_message(QueueUrl=url, MessageBody="after")
    assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "after"


# ---------------------------------------------------------------- FIFO


def fifo_queue(sqs, **attrs):
    attributes = {"FifoQueue": "true", **attrs}
    return sqs.create_queue(QueueName=uniq("fifo") + ".fifo", Attributes=attributes)["QueueUrl"]


def test_fifo_order_sequence_numbers_and_group_locking(sqs):
    url = fifo_queue(sqs)
    seqs = []
    for i in range(3):
        for g in ("A", "B"):
            r = sqs.send_message(QueueUrl=url, MessageBody=f"{g}{i}", MessageGroupId=g,
                                 MessageDeduplicationId=f"{g}{i}")
            seqs.append(int(r["SequenceNumber"]))
    assert seqs == sorted(seqs) and len(set(seqs)) == 6 and len(str(seqs[0])) == 20
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"])["Messages"]
    by_group = {}
    for m in got:
        by_group.setdefault(m["Attributes"]["MessageGroupId"], []).append(m["Body"])
    assert by_group == {"A": ["A0", "A1", "A2"], "B": ["B0", "B1", "B2"]}
    assert got[0]["Attributes"]["MessageDeduplicationId"]
    assert got[0]["Attributes"]["SequenceNumber"]
    # Both groups are locked while their messages are in flight.
    sqs.send_message(QueueUrl=url, MessageBody="A3", MessageGroupId="A", MessageDeduplicationId="A3")
    sqs.send_message(QueueUrl=url, MessageBody="C0", MessageGroupId="C", MessageDeduplicationId="C0")
    more = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in more] == ["C0"]
    # Deleting group A's in-flight messages unlocks it.
    for m in got:
        if m["Body"].startswith("A"):
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    again = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in again] == ["A3"]


def test_fifo_long_poll_woken_when_group_unlocks(cumulo, sqs):
    url = fifo_queue(sqs, ContentBasedDeduplication="true")
    for body in ("one", "two"):
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="g")
    handle = sqs.receive_message(QueueUrl=url)["Messages"][0]["ReceiptHandle"]
    deleter = cumulo.client("sqs")
    th = threading.Timer(0.7, lambda: deleter.delete_message(QueueUrl=url, ReceiptHandle=handle))
    t = time.time()
    th.start()
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20)["Messages"]
    th.join()
    assert [m["Body"] for m in got] == ["two"]
    # Woken by the delete (~0.7 s), not at the end of the 20 s wait.
    assert time.time() - t < 10


def test_fifo_group_blocks_until_visibility_returns_in_order(sqs):
    url = fifo_queue(sqs, ContentBasedDeduplication="true")
    for body in ("first", "second"):
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="g")
    m = sqs.receive_message(QueueUrl=url)["Messages"][0]
    assert m["Body"] == "first"
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "first"


def test_fifo_queue_delay_keeps_group_order(sqs):
    url = fifo_queue(sqs, ContentBasedDeduplication="true")
    sqs.send_message(QueueUrl=url, MessageBody="early", MessageGroupId="g")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "1"})
    sqs.send_message(QueueUrl=url, MessageBody="late", MessageGroupId="g")
    first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in first] == ["early"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=first[0]["ReceiptHandle"])
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    later = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=3)["Messages"]
    assert [m["Body"] for m in later] == ["late"]


def test_fifo_receive_request_attempt_id_replays(sqs):
    url = fifo_queue(sqs, ContentBasedDeduplication="true")
    for body in ("a", "b"):
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="g")
    first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, ReceiveRequestAttemptId="try-1")["Messages"]
    again = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, ReceiveRequestAttemptId="try-1")["Messages"]
    assert [m["Body"] for m in first] == ["a", "b"]
    assert [m["ReceiptHandle"] for m in again] == [m["ReceiptHandle"] for m in first]
    assert "Messages" not in sqs.receive_message(QueueUrl=url, ReceiveRequestAttemptId="try-2")
    # Once a message of the attempt is deleted, the id no longer replays.
    sqs.delete_message(QueueUrl=url, ReceiptHandle=first[0]["ReceiptHandle"])
    assert "Messages" not in sqs.receive_message(QueueUrl=url, ReceiveRequestAttemptId="try-1")
    with pytest.raises(ClientError) as e:
        sqs.receive_message(QueueUrl=url, ReceiveRequestAttemptId="x" * 129)
    assert error_code(e) == "InvalidParameterValue"


def test_fifo_deduplication(sqs):
    url = fifo_queue(sqs)
    a = sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId="g", MessageDeduplicationId="d1")
    b = sqs.send_message(QueueUrl=url, MessageBody="other", MessageGroupId="g", MessageDeduplicationId="d1")
    assert a["MessageId"] == b["MessageId"] and a["SequenceNumber"] == b["SequenceNumber"]
    cbd = fifo_queue(sqs, ContentBasedDeduplication="true")
    c = sqs.send_message(QueueUrl=cbd, MessageBody="same", MessageGroupId="g")
    d = sqs.send_message(QueueUrl=cbd, MessageBody="same", MessageGroupId="h")
    e = sqs.send_message(QueueUrl=cbd, MessageBody="different", MessageGroupId="g")
    assert c["MessageId"] == d["MessageId"] != e["MessageId"]
    for q, n in ((url, 1), (cbd, 2)):
        msgs = sqs.receive_message(QueueUrl=q, MaxNumberOfMessages=10)["Messages"]
        assert len(msgs) == n
    # Batches deduplicate within themselves too.
    r = sqs.send_message_batch(QueueUrl=url, Entries=[
        {"Id": "a", "MessageBody": "1", "MessageGroupId": "z", "MessageDeduplicationId": "same"},
        {"Id": "b", "MessageBody": "2", "MessageGroupId": "z", "MessageDeduplicationId": "same"},
    ])
    ids = {s["Id"]: s["MessageId"] for s in r["Successful"]}
    assert ids["a"] == ids["b"]


def test_fifo_dedup_scope_message_group(sqs):
    url = fifo_queue(sqs, DeduplicationScope="messageGroup")
    a = sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId="g1", MessageDeduplicationId="d")
    b = sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId="g2", MessageDeduplicationId="d")
    assert a["MessageId"] != b["MessageId"]


def test_fifo_errors(sqs):
    url = fifo_queue(sqs)
    with pytest.raises(ClientError) as e:
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageDeduplicationId="d")
    assert error_code(e) == "MissingParameter"
    with pytest.raises(ClientError) as e:
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId="g")
    assert error_code(e) == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId="g", MessageDeduplicationId="d",
                         DelaySeconds=5)
    assert error_code(e) == "InvalidParameterValue"
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


# ---------------------------------------------------------------- dead-letter queues


def test_redrive_to_dead_letter_queue(sqs):
    dlq = sqs.create_queue(QueueName=uniq("dlq"))["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "2"})
    src = sqs.create_queue(QueueName=uniq("src"), Attributes={"RedrivePolicy": policy})["QueueUrl"]
    a = sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["RedrivePolicy"])["Attributes"]
    assert json.loads(a["RedrivePolicy"]) == {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2}
    sent = sqs.send_message(QueueUrl=src, MessageBody="poison")
    for _ in range(2):
        m = sqs.receive_message(QueueUrl=src, VisibilityTimeout=0)["Messages"][0]
        assert m["MessageId"] == sent["MessageId"]
    assert "Messages" not in sqs.receive_message(QueueUrl=src)
    moved = sqs.receive_message(QueueUrl=dlq, AttributeNames=["All"])["Messages"][0]
    assert moved["MessageId"] == sent["MessageId"] and moved["Body"] == "poison"
    assert moved["Attributes"]["DeadLetterQueueSourceArn"].endswith(src.rsplit("/", 1)[1])
    sources = sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"]
    assert sources == [src]
    assert sqs.list_dead_letter_source_queues(QueueUrl=src)["queueUrls"] == []


def test_message_move_tasks_redrive_back(sqs):
    dlq = sqs.create_queue(QueueName=uniq("mdlq"))["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    src = sqs.create_queue(QueueName=uniq("msrc"), Attributes={
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})})["QueueUrl"]
    for i in range(3):
        sqs.send_message(QueueUrl=src, MessageBody=f"m{i}")
    sqs.receive_message(QueueUrl=src, MaxNumberOfMessages=10, VisibilityTimeout=0)
    assert "Messages" not in sqs.receive_message(QueueUrl=src, MaxNumberOfMessages=10)
    sqs.send_message(QueueUrl=dlq, MessageBody="orphan")  # never redriven: no source to go back to
    handle = sqs.start_message_move_task(SourceArn=dlq_arn)["TaskHandle"]
    assert handle
    [task] = sqs.list_message_move_tasks(SourceArn=dlq_arn)["Results"]
    assert task["Status"] == "FAILED" and "DestinationArn" in task["FailureReason"]
    assert task["ApproximateNumberOfMessagesMoved"] == 3 and task["ApproximateNumberOfMessagesToMove"] == 4
    back = sqs.receive_message(QueueUrl=src, MaxNumberOfMessages=10, AttributeNames=["All"])["Messages"]
    assert sorted(m["Body"] for m in back) == ["m0", "m1", "m2"]
    assert all(m["Attributes"]["ApproximateReceiveCount"] == "1" for m in back)
    other = sqs.create_queue(QueueName=uniq("mdest"))["QueueUrl"]
    other_arn = sqs.get_queue_attributes(QueueUrl=other, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sqs.start_message_move_task(SourceArn=dlq_arn, DestinationArn=other_arn, MaxNumberOfMessagesPerSecond=10)
    tasks = sqs.list_message_move_tasks(SourceArn=dlq_arn, MaxResults=10)["Results"]
    assert [t["Status"] for t in tasks] == ["COMPLETED", "FAILED"]
    assert tasks[0]["DestinationArn"] == other_arn and tasks[0]["MaxNumberOfMessagesPerSecond"] == 10
    assert sqs.receive_message(QueueUrl=other)["Messages"][0]["Body"] == "orphan"
    assert "Messages" not in sqs.receive_message(QueueUrl=dlq)
    with pytest.raises(ClientError) as e:
        sqs.cancel_message_move_task(TaskHandle=handle)
    assert error_code(e) == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        sqs.cancel_message_move_task(TaskHandle="bm90LWEtdGFzaw==")
    assert error_code(e) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        sqs.start_message_move_task(SourceArn=other_arn)
    assert error_code(e) == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        sqs.start_message_move_task(SourceArn="arn:aws:sqs:us-east-1:000000000000:missing")
    assert error_code(e) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        sqs.start_message_move_task(SourceArn=dlq_arn, MaxNumberOfMessagesPerSecond=501)
    assert error_code(e) == "InvalidParameterValue"


def test_redrive_allow_policy_is_enforced(sqs):
    allowed_name, denied_name = uniq("allowed"), uniq("denied")
    allowed_arn = f"arn:aws:sqs:us-east-1:000000000000:{allowed_name}"
    dlq = sqs.create_queue(QueueName=uniq("picky"), Attributes={"RedriveAllowPolicy": json.dumps(
        {"redrivePermission": "byQueue", "sourceQueueArns": [allowed_arn]})})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = {"RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})}
    assert sqs.create_queue(QueueName=allowed_name, Attributes=policy)["QueueUrl"]
    with pytest.raises(ClientError) as e:
        sqs.create_queue(QueueName=denied_name, Attributes=policy)
    assert error_code(e) == "InvalidParameterValue"
    sqs.set_queue_attributes(QueueUrl=dlq, Attributes={"RedriveAllowPolicy": '{"redrivePermission":"denyAll"}'})
    other = sqs.create_queue(QueueName=uniq("other"))["QueueUrl"]
    with pytest.raises(ClientError) as e:
        sqs.set_queue_attributes(QueueUrl=other, Attributes=policy)
    assert error_code(e) == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        sqs.set_queue_attributes(QueueUrl=dlq, Attributes={"RedriveAllowPolicy": '{"redrivePermission":"byQueue"}'})
    assert error_code(e) == "InvalidParameterValue"


def test_redrive_policy_requires_same_queue_type(sqs):
    dlq = fifo_queue(sqs)
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    with pytest.raises(ClientError) as e:
        sqs.create_queue(QueueName=uniq("std"), Attributes={
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})})
    assert error_code(e) == "InvalidParameterValue"


# ---------------------------------------------------------------- routing, regions, 501


def test_queue_url_from_any_host_resolves_by_path(sqs):
    url = sqs.create_queue(QueueName=uniq("host"))["QueueUrl"]
    other = "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/" + url.rsplit("/", 1)[1]
    sqs.send_message(QueueUrl=other, MessageBody="via other host")
    assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "via other host"


def test_queues_are_per_region(cumulo):
    east, west = cumulo.client("sqs", region="us-east-1"), cumulo.client("sqs", region="us-west-2")
    name = uniq("region")
    west.create_queue(QueueName=name)
    with pytest.raises(ClientError):
        east.get_queue_url(QueueName=name)
    arn = west.get_queue_attributes(QueueUrl=west.get_queue_url(QueueName=name)["QueueUrl"],
                                    AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert arn.startswith("arn:aws:sqs:us-west-2:")


def test_add_and_remove_permission_edit_the_policy(sqs):
    url = sqs.create_queue(QueueName=uniq("perm"))["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sqs.add_permission(QueueUrl=url, Label="send", AWSAccountIds=["111111111111"], Actions=["SendMessage"])
    sqs.add_permission(QueueUrl=url, Label="both", AWSAccountIds=["111111111111", "222222222222"],
                       Actions=["ReceiveMessage", "DeleteMessage"])
    policy = json.loads(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]["Policy"])
    by_sid = {st["Sid"]: st for st in policy["Statement"]}
    assert by_sid["send"] == {"Sid": "send", "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111111111111:root"},
                              "Action": "SQS:SendMessage", "Resource": arn}
    assert by_sid["both"]["Action"] == ["SQS:ReceiveMessage", "SQS:DeleteMessage"]
    with pytest.raises(ClientError) as e:
        sqs.add_permission(QueueUrl=url, Label="send", AWSAccountIds=["1"], Actions=["SendMessage"])
    assert error_code(e) == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        sqs.add_permission(QueueUrl=url, Label="x", AWSAccountIds=["1"], Actions=["Fly"])
    assert error_code(e) == "InvalidParameterValue"
    sqs.remove_permission(QueueUrl=url, Label="send")
    policy = json.loads(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]["Policy"])
    assert [st["Sid"] for st in policy["Statement"]] == ["both"]
    with pytest.raises(ClientError) as e:
        sqs.remove_permission(QueueUrl=url, Label="send")
    assert error_code(e) == "InvalidParameterValue"
    sqs.remove_permission(QueueUrl=url, Label="both")
    assert "Policy" not in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]


def test_get_queue_url_for_another_account_does_not_exist(sqs):
    name = uniq("owner")
    sqs.create_queue(QueueName=name)
    assert sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId="000000000000")["QueueUrl"]
    with pytest.raises(ClientError) as e:
        sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId="123456789012")
    assert error_code(e) == "AWS.SimpleQueueService.NonExistentQueue"


def test_unknown_action_is_a_400(cumulo):
    req = urllib.request.Request(cumulo.endpoint + "/", data=b"{}", headers={
        "X-Amz-Target": "AmazonSQS.FlyAway",
        "Content-Type": "application/x-amz-json-1.0",
        "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0",
    })
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req)
    assert e.value.code == 400
    assert e.value.headers["x-amzn-query-error"] == "InvalidAction;Sender"


def test_malformed_json_body_is_a_400(cumulo):
    req = urllib.request.Request(cumulo.endpoint + "/", data=b"{not json", headers={
        "X-Amz-Target": "AmazonSQS.SendMessage",
        "Content-Type": "application/x-amz-json-1.0",
        "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0",
    })
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req)
    assert e.value.code == 400


# ---------------------------------------------------------------- AWS CLI


def aws(server, *args, check=True):
    """The AWS CLI against `server`, JSON output parsed. (conftest's `aws` helper passes
    AWS_DEFAULT_REGION twice to dict() and raises TypeError, so this module carries its own.)"""
    env = dict(os.environ, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
               AWS_DEFAULT_REGION="us-east-1")
    proc = subprocess.run(["aws", "--endpoint-url", server.endpoint, "--output", "json", *args],
                          capture_output=True, text=True, env=env, timeout=120)
    if not check:
        return proc
    assert proc.returncode == 0, f"aws {' '.join(args)} failed: {proc.stderr}"
    out = proc.stdout.strip()
    return json.loads(out) if out else None


def test_aws_cli_round_trip(cumulo):
    name = uniq("cli")
    url = aws(cumulo, "sqs", "create-queue", "--queue-name", name,
                     "--attributes", "VisibilityTimeout=40", "--tags", "k=v")["QueueUrl"]
    assert aws(cumulo, "sqs", "get-queue-url", "--queue-name", name)["QueueUrl"] == url
    assert url in aws(cumulo, "sqs", "list-queues", "--queue-name-prefix", name)["QueueUrls"]
    sent = aws(cumulo, "sqs", "send-message", "--queue-url", url, "--message-body", "from cli",
                      "--message-attributes", '{"a":{"DataType":"String","StringValue":"1"}}')
    assert sent["MD5OfMessageBody"] == hashlib.md5(b"from cli").hexdigest()
    got = aws(cumulo, "sqs", "receive-message", "--queue-url", url, "--message-attribute-names", "All",
                     "--attribute-names", "All")["Messages"][0]
    assert got["Body"] == "from cli" and got["MessageAttributes"]["a"]["StringValue"] == "1"
    attrs = aws(cumulo, "sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "All")["Attributes"]
    assert attrs["VisibilityTimeout"] == "40" and attrs["ApproximateNumberOfMessagesNotVisible"] == "1"
    aws(cumulo, "sqs", "change-message-visibility", "--queue-url", url, "--receipt-handle",
               got["ReceiptHandle"], "--visibility-timeout", "0")
    aws(cumulo, "sqs", "delete-message", "--queue-url", url, "--receipt-handle", got["ReceiptHandle"])
    aws(cumulo, "sqs", "set-queue-attributes", "--queue-url", url, "--attributes", "DelaySeconds=3")
    aws(cumulo, "sqs", "tag-queue", "--queue-url", url, "--tags", "x=y")
    assert aws(cumulo, "sqs", "list-queue-tags", "--queue-url", url)["Tags"] == {"k": "v", "x": "y"}
    aws(cumulo, "sqs", "untag-queue", "--queue-url", url, "--tag-keys", "k")
    aws(cumulo, "sqs", "purge-queue", "--queue-url", url)
    batch = aws(cumulo, "sqs", "send-message-batch", "--queue-url", url, "--entries",
                       json.dumps([{"Id": "a", "MessageBody": "1"}, {"Id": "b", "MessageBody": "2"}]))
    assert len(batch["Successful"]) == 2
    aws(cumulo, "sqs", "delete-queue", "--queue-url", url)
    proc = aws(cumulo, "sqs", "get-queue-url", "--queue-name", name, check=False)
    assert proc.returncode != 0
    assert "AWS.SimpleQueueService.NonExistentQueue" in proc.stderr


# ---------------------------------------------------------------- query protocol


def query(cumulo, params, path="/"):
    data = urllib.parse.urlencode({**params, "Version": "2012-11-05"}).encode()
    req = urllib.request.Request(cumulo.endpoint + path, data=data, headers={
        "Content-Type": "application/x-www-form-urlencoded",
        "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0",
    })
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, ET.fromstring(r.read())
    except urllib.error.HTTPError as e:
        return e.code, ET.fromstring(e.read())


def test_query_protocol_round_trip(cumulo):
    name = uniq("query")
    status, doc = query(cumulo, {"Action": "CreateQueue", "QueueName": name,
                                 "Attribute.1.Name": "VisibilityTimeout", "Attribute.1.Value": "50",
                                 "Tag.1.Key": "t", "Tag.1.Value": "v"})
    assert status == 200
    assert doc.tag == "{%s}CreateQueueResponse" % NS["q"]
    url = doc.find("q:CreateQueueResult/q:QueueUrl", NS).text
    assert url.endswith(f"/000000000000/{name}")
    assert doc.find("q:ResponseMetadata/q:RequestId", NS).text
    path = urllib.parse.urlparse(url).path

    status, doc = query(cumulo, {"Action": "SendMessage", "QueueUrl": url, "MessageBody": "q & <a>",
                                 "MessageAttribute.1.Name": "n",
                                 "MessageAttribute.1.Value.DataType": "Number",
                                 "MessageAttribute.1.Value.StringValue": "3",
                                 "MessageAttribute.2.Name": "b",
                                 "MessageAttribute.2.Value.DataType": "Binary",
                                 "MessageAttribute.2.Value.BinaryValue": base64.b64encode(b"\x01\x02").decode()})
    assert status == 200
    res = doc.find("q:SendMessageResult", NS)
    assert res.find("q:MD5OfMessageBody", NS).text == hashlib.md5("q & <a>".encode()).hexdigest()
    expected = md5_of_attributes({"n": {"DataType": "Number", "StringValue": "3"},
                                  "b": {"DataType": "Binary", "BinaryValue": b"\x01\x02"}})
    assert res.find("q:MD5OfMessageAttributes", NS).text == expected

    # POSTed to the queue URL path, without QueueUrl.
    status, doc = query(cumulo, {"Action": "ReceiveMessage", "AttributeName.1": "All",
                                 "MessageAttributeName.1": "All"}, path=path)
    assert status == 200
    msg = doc.find("q:ReceiveMessageResult/q:Message", NS)
    assert msg.find("q:Body", NS).text == "q & <a>"
    attrs = {a.find("q:Name", NS).text: a.find("q:Value", NS).text for a in msg.findall("q:Attribute", NS)}
    assert attrs["ApproximateReceiveCount"] == "1"
    mattrs = {a.find("q:Name", NS).text: a.find("q:Value", NS) for a in msg.findall("q:MessageAttribute", NS)}
    assert mattrs["n"].find("q:StringValue", NS).text == "3"
    assert base64.b64decode(mattrs["b"].find("q:BinaryValue", NS).text) == b"\x01\x02"
    handle = msg.find("q:ReceiptHandle", NS).text

    status, doc = query(cumulo, {"Action": "GetQueueAttributes", "QueueUrl": url, "AttributeName.1": "All"})
    got = {a.find("q:Name", NS).text: a.find("q:Value", NS).text
           for a in doc.findall("q:GetQueueAttributesResult/q:Attribute", NS)}
    assert got["VisibilityTimeout"] == "50" and got["ApproximateNumberOfMessagesNotVisible"] == "1"

    status, doc = query(cumulo, {"Action": "ListQueueTags", "QueueUrl": url})
    tags = {t.find("q:Key", NS).text: t.find("q:Value", NS).text for t in doc.findall("q:ListQueueTagsResult/q:Tag", NS)}
    assert tags == {"t": "v"}

    status, doc = query(cumulo, {"Action": "SendMessageBatch", "QueueUrl": url,
                                 "SendMessageBatchRequestEntry.1.Id": "a",
                                 "SendMessageBatchRequestEntry.1.MessageBody": "b1",
                                 "SendMessageBatchRequestEntry.2.Id": "b",
                                 "SendMessageBatchRequestEntry.2.MessageBody": "b2"})
    ids = [e.find("q:Id", NS).text for e in doc.findall("q:SendMessageBatchResult/q:SendMessageBatchResultEntry", NS)]
    assert ids == ["a", "b"]

    status, doc = query(cumulo, {"Action": "DeleteMessageBatch", "QueueUrl": url,
                                 "DeleteMessageBatchRequestEntry.1.Id": "x",
                                 "DeleteMessageBatchRequestEntry.1.ReceiptHandle": handle,
                                 "DeleteMessageBatchRequestEntry.2.Id": "y",
                                 "DeleteMessageBatchRequestEntry.2.ReceiptHandle": "junk"})
    res = doc.find("q:DeleteMessageBatchResult", NS)
    assert [e.find("q:Id", NS).text for e in res.findall("q:DeleteMessageBatchResultEntry", NS)] == ["x"]
    err = res.find("q:BatchResultErrorEntry", NS)
    assert err.find("q:Code", NS).text == "ReceiptHandleIsInvalid"
    assert err.find("q:SenderFault", NS).text == "true"

    status, doc = query(cumulo, {"Action": "ListQueues", "QueueNamePrefix": name})
    assert [u.text for u in doc.findall("q:ListQueuesResult/q:QueueUrl", NS)] == [url]
    status, doc = query(cumulo, {"Action": "GetQueueUrl", "QueueName": name})
    assert doc.find("q:GetQueueUrlResult/q:QueueUrl", NS).text == url
    status, doc = query(cumulo, {"Action": "DeleteQueue"}, path=path)
    assert status == 200
    assert doc.tag == "{%s}DeleteQueueResponse" % NS["q"]
    assert [child.tag.split("}")[1] for child in doc] == ["ResponseMetadata"]
    status, doc = query(cumulo, {"Action": "GetQueueUrl", "QueueName": name})
    assert status == 400
    assert doc.find("q:Error/q:Code", NS).text == "AWS.SimpleQueueService.NonExistentQueue"
    assert doc.find("q:Error/q:Type", NS).text == "Sender"
    assert doc.find("q:RequestId", NS).text


def test_query_protocol_errors(cumulo):
    status, doc = query(cumulo, {"Action": "CreateQueue", "QueueName": uniq("qerr"),
                                 "Attribute.1.Name": "VisibilityTimeout", "Attribute.1.Value": "99999"})
    assert status == 400 and doc.find("q:Error/q:Code", NS).text == "InvalidAttributeValue"
    status, doc = query(cumulo, {"Action": "NoSuchAction"})
    assert status == 400 and doc.find("q:Error/q:Code", NS).text == "InvalidAction"
    status, doc = query(cumulo, {"Action": "CancelMessageMoveTask", "TaskHandle": "x"})
    assert status == 400 and doc.find("q:Error/q:Code", NS).text == "ResourceNotFoundException"


# ---------------------------------------------------------------- durability


def test_state_survives_kill_9(fresh_server):
    server = fresh_server.start()
    sqs = server.client("sqs")
    url = sqs.create_queue(QueueName="durable", Attributes={"VisibilityTimeout": "77"},
                           tags={"keep": "me"})["QueueUrl"]
    furl = sqs.create_queue(QueueName="durable.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=f"m{i}",
                         MessageAttributes={"i": {"DataType": "Number", "StringValue": str(i)}})
    inflight = sqs.receive_message(QueueUrl=url, VisibilityTimeout=600)["Messages"][0]
    fsent = sqs.send_message(QueueUrl=furl, MessageBody="f", MessageGroupId="g", MessageDeduplicationId="d")
    # Consume the FIFO message: its sequence number must still bound later ones after restart.
    fmsg = sqs.receive_message(QueueUrl=furl)["Messages"][0]
    sqs.delete_message(QueueUrl=furl, ReceiptHandle=fmsg["ReceiptHandle"])
    server.kill9()
    server.start()
    sqs = server.client("sqs")
    assert sqs.get_queue_url(QueueName="durable")["QueueUrl"] == url
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert a["VisibilityTimeout"] == "77"
    assert a["ApproximateNumberOfMessages"] == "2" and a["ApproximateNumberOfMessagesNotVisible"] == "1"
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"keep": "me"}
    rest = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"],
                               AttributeNames=["ApproximateReceiveCount"])["Messages"]
    assert inflight["MessageId"] not in {m["MessageId"] for m in rest}
    assert len(rest) == 2 and all(m["MessageAttributes"]["i"]["DataType"] == "Number" for m in rest)
    # The receipt handle from before the crash still works.
    sqs.delete_message(QueueUrl=url, ReceiptHandle=inflight["ReceiptHandle"])
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"])[
        "Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "2"
    # FIFO deduplication and sequence numbers survive too.
    dup = sqs.send_message(QueueUrl=furl, MessageBody="f", MessageGroupId="g", MessageDeduplicationId="d")
    assert dup["MessageId"] == fsent["MessageId"]
    assert "Messages" not in sqs.receive_message(QueueUrl=furl)
    nxt = sqs.send_message(QueueUrl=furl, MessageBody="f2", MessageGroupId="g", MessageDeduplicationId="d2")
    assert int(nxt["SequenceNumber"]) > int(fsent["SequenceNumber"])
    sqs.delete_queue(QueueUrl=url)
    server.stop()
    server.start()
    with pytest.raises(ClientError):
        server.client("sqs").get_queue_url(QueueName="durable")
