"""SNS through boto3 and the AWS CLI: topics, subscriptions, attributes, tags, filter policies,
and delivery to SQS (raw and enveloped), FIFO, batches, http endpoints, and persistence."""
import base64
import http.server
import json
import threading
import urllib.request
import uuid

import pytest
from botocore.exceptions import ClientError


def uid():
    return uuid.uuid4().hex[:8]


def code(exc):
    return exc.value.response["Error"]["Code"]


@pytest.fixture
def sns(cumulo):
    return cumulo.client("sns")


@pytest.fixture
def sqs(cumulo):
    return cumulo.client("sqs")


def make_queue(sqs, fifo=False):
    name = f"q-{uid()}" + (".fifo" if fifo else "")
    attrs = {"FifoQueue": "true"} if fifo else {}
    url = sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def drain(sqs, url, expect=None, wait=1):
    """Receives until `expect` messages arrived (or one empty long poll when expect is None)."""
    got = []
    for _ in range(10):
        resp = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=wait,
                                   MessageAttributeNames=["All"], AttributeNames=["All"])
        msgs = resp.get("Messages", [])
        got += msgs
        for m in msgs:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        if expect is not None and len(got) >= expect:
            break
        if expect is None and not msgs:
            break
    return got


# --- topics -------------------------------------------------------------------------------


def test_create_topic_is_idempotent_and_checks_conflicts(sns):
    name = f"t-{uid()}"
    arn = sns.create_topic(Name=name, Attributes={"DisplayName": "d"}, Tags=[{"Key": "k", "Value": "v"}])["TopicArn"]
    assert arn == f"arn:aws:sns:us-east-1:000000000000:{name}"
    assert sns.create_topic(Name=name)["TopicArn"] == arn
    assert sns.create_topic(Name=name, Attributes={"DisplayName": "d"})["TopicArn"] == arn
    with pytest.raises(ClientError) as e:
        sns.create_topic(Name=name, Attributes={"DisplayName": "other"})
    assert code(e) == "InvalidParameter"
    assert "Topic already exists with different attributes" in e.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as e:
        sns.create_topic(Name=name, Tags=[{"Key": "k", "Value": "other"}])
    assert "different tags" in e.value.response["Error"]["Message"]


@pytest.mark.parametrize("name,attrs", [
    ("bad name!", {}),
    ("x" * 257, {}),
    ("plain.fifo", {}),
    ("notfifo", {"FifoTopic": "true"}),
])
def test_create_topic_rejects_bad_names(sns, name, attrs):
    with pytest.raises(ClientError) as e:
        sns.create_topic(Name=name, Attributes=attrs)
    assert code(e) == "InvalidParameter"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_topic_attributes_defaults_and_updates(sns, sqs):
    arn = sns.create_topic(Name=f"attrs-{uid()}")["TopicArn"]
    a = sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    assert a["TopicArn"] == arn and a["Owner"] == "000000000000"
    assert a["DisplayName"] == ""
    assert (a["SubscriptionsConfirmed"], a["SubscriptionsPending"], a["SubscriptionsDeleted"]) == ("0", "0", "0")
    policy = json.loads(a["Policy"])
    assert policy["Id"] == "__default_policy_ID"
    assert policy["Statement"][0]["Resource"] == arn
    assert "SNS:Publish" in policy["Statement"][0]["Action"]
    assert policy["Statement"][0]["Condition"] == {"StringEquals": {"AWS:SourceOwner": "000000000000"}}
    assert json.loads(a["EffectiveDeliveryPolicy"])["http"]["defaultHealthyRetryPolicy"]["numRetries"] == 3
    assert "FifoTopic" not in a
    sns.set_topic_attributes(TopicArn=arn, AttributeName="DisplayName", AttributeValue="Shown")
    sns.set_topic_attributes(TopicArn=arn, AttributeName="KmsMasterKeyId", AttributeValue="alias/aws/sns")
    a = sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    assert a["DisplayName"] == "Shown" and a["KmsMasterKeyId"] == "alias/aws/sns"
    for name, value in [("FifoTopic", "true"), ("Bogus", "x"), ("Policy", "{not json"),
                        ("ContentBasedDeduplication", "true")]:
        with pytest.raises(ClientError) as e:
            sns.set_topic_attributes(TopicArn=arn, AttributeName=name, AttributeValue=value)
        assert code(e) == "InvalidParameter", name
    _, q = make_queue(sqs)
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q)["SubscriptionArn"]
    sns.subscribe(TopicArn=arn, Protocol="email", Endpoint="a@example.com")
    a = sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    assert (a["SubscriptionsConfirmed"], a["SubscriptionsPending"]) == ("1", "1")
    sns.unsubscribe(SubscriptionArn=sub)
    assert sns.get_topic_attributes(TopicArn=arn)["Attributes"]["SubscriptionsDeleted"] == "1"


def test_fifo_topic_attributes(sns):
    arn = sns.create_topic(Name=f"f-{uid()}.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    a = sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    assert a["FifoTopic"] == "true" and a["ContentBasedDeduplication"] == "false"
    sns.set_topic_attributes(TopicArn=arn, AttributeName="ContentBasedDeduplication", AttributeValue="true")
    assert sns.get_topic_attributes(TopicArn=arn)["Attributes"]["ContentBasedDeduplication"] == "true"


def test_missing_topic_is_not_found(sns):
    arn = f"arn:aws:sns:us-east-1:000000000000:nope-{uid()}"
    with pytest.raises(ClientError) as e:
        sns.get_topic_attributes(TopicArn=arn)
    assert code(e) == "NotFound"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    with pytest.raises(ClientError) as e:
        sns.publish(TopicArn=arn, Message="x")
    assert code(e) == "NotFound"
    with pytest.raises(ClientError) as e:
        sns.get_topic_attributes(TopicArn="not-an-arn")
    assert code(e) == "InvalidParameter"
    sns.delete_topic(TopicArn=arn)  # idempotent, as in AWS
    real = sns.create_topic(Name=f"real-{uid()}")["TopicArn"]
    with pytest.raises(ClientError) as e:
        sns.publish(TopicArn=real + ":" + str(uuid.uuid4()), Message="x")
    assert e.value.response["Error"]["Message"] == "Invalid parameter: Topic Name"
    with pytest.raises(ClientError) as e:
        sns.unsubscribe(SubscriptionArn=real)
    assert e.value.response["Error"]["Message"] == "Invalid parameter: SubscriptionId"


def test_list_topics_paginates_per_region(cumulo):
    sns = cumulo.client("sns", region="ap-south-1")
    made = {sns.create_topic(Name=f"page-{i:03d}")["TopicArn"] for i in range(105)}
    first = sns.list_topics()
    assert len(first["Topics"]) == 100 and "NextToken" in first
    second = sns.list_topics(NextToken=first["NextToken"])
    listed = {t["TopicArn"] for t in first["Topics"] + second["Topics"]}
    assert made <= listed
    assert all(":ap-south-1:" in a for a in listed)
    assert not any(":ap-south-1:" in t["TopicArn"] for t in cumulo.client("sns").list_topics()["Topics"])


def test_delete_topic_removes_subscriptions(sns, sqs):
    arn = sns.create_topic(Name=f"del-{uid()}")["TopicArn"]
    _, q = make_queue(sqs)
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q)["SubscriptionArn"]
    sns.delete_topic(TopicArn=arn)
    assert arn not in [t["TopicArn"] for t in sns.list_topics()["Topics"]]
    assert sub not in [s["SubscriptionArn"] for s in sns.list_subscriptions()["Subscriptions"]]
    with pytest.raises(ClientError) as e:
        sns.get_subscription_attributes(SubscriptionArn=sub)
    assert code(e) == "NotFound"


def test_tags(sns):
    arn = sns.create_topic(Name=f"tags-{uid()}", Tags=[{"Key": "a", "Value": "1"}])["TopicArn"]
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "b", "Value": "2"}, {"Key": "a", "Value": "3"}])
    tags = sns.list_tags_for_resource(ResourceArn=arn)["Tags"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("a", "3"), ("b", "2")]
    sns.untag_resource(ResourceArn=arn, TagKeys=["a"])
    assert sns.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "b", "Value": "2"}]
    with pytest.raises(ClientError) as e:
        sns.list_tags_for_resource(ResourceArn=arn + "-missing")
    assert code(e) == "ResourceNotFound"
    with pytest.raises(ClientError) as e:
        sns.tag_resource(ResourceArn=arn, Tags=[{"Key": f"k{i}", "Value": "v"} for i in range(51)])
    assert code(e) == "TagLimitExceeded"


# --- subscriptions ------------------------------------------------------------------------


def test_subscribe_confirms_sqs_and_is_idempotent(sns, sqs):
    arn = sns.create_topic(Name=f"sub-{uid()}")["TopicArn"]
    _, q = make_queue(sqs)
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q)["SubscriptionArn"]
    assert sub.startswith(arn + ":")
    assert sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q)["SubscriptionArn"] == sub
    with pytest.raises(ClientError) as e:
        sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q, Attributes={"RawMessageDelivery": "true"})
    assert "different attributes" in e.value.response["Error"]["Message"]
    a = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert a["PendingConfirmation"] == "false" and a["Protocol"] == "sqs" and a["Endpoint"] == q
    assert a["TopicArn"] == arn and a["Owner"] == "000000000000" and a["RawMessageDelivery"] == "false"
    listed = sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]
    assert listed == [{"SubscriptionArn": sub, "Owner": "000000000000", "Protocol": "sqs",
                       "Endpoint": q, "TopicArn": arn}]
    assert sub in [s["SubscriptionArn"] for s in sns.list_subscriptions()["Subscriptions"]]
    sns.unsubscribe(SubscriptionArn=sub)
    sns.unsubscribe(SubscriptionArn=sub)  # idempotent
    assert sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"] == []


def test_pending_subscriptions_and_return_arn(sns):
    arn = sns.create_topic(Name=f"pend-{uid()}")["TopicArn"]
    out = sns.subscribe(TopicArn=arn, Protocol="email", Endpoint="me@example.com")
    assert out["SubscriptionArn"] == "pending confirmation"
    real = sns.subscribe(TopicArn=arn, Protocol="email-json", Endpoint="me@example.com",
                         ReturnSubscriptionArn=True)["SubscriptionArn"]
    assert real.startswith(arn + ":")
    assert sns.get_subscription_attributes(SubscriptionArn=real)["Attributes"]["PendingConfirmation"] == "true"
    listed = sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]
    assert {s["SubscriptionArn"] for s in listed} == {"PendingConfirmation"}
    with pytest.raises(ClientError) as e:
        sns.confirm_subscription(TopicArn=arn, Token="wrong")
    assert code(e) == "InvalidParameter"


@pytest.mark.parametrize("protocol,endpoint", [
    ("carrier-pigeon", "x"),
    ("sqs", "not-an-arn"),
    ("http", "https://wrong-scheme.example.com"),
    ("email", "no-at-sign"),
    ("lambda", "arn:aws:sqs:us-east-1:000000000000:q"),
])
def test_subscribe_validates_endpoints(sns, protocol, endpoint):
    arn = sns.create_topic(Name="validate-endpoints")["TopicArn"]
    with pytest.raises(ClientError) as e:
        sns.subscribe(TopicArn=arn, Protocol=protocol, Endpoint=endpoint)
    assert code(e) == "InvalidParameter"


def test_subscription_attributes(sns, sqs):
    arn = sns.create_topic(Name=f"sattr-{uid()}")["TopicArn"]
    _, q = make_queue(sqs)
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q, ReturnSubscriptionArn=True)["SubscriptionArn"]
    policy = json.dumps({"color": ["red"]})
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RawMessageDelivery", AttributeValue="true")
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue=policy)
    a = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert a["RawMessageDelivery"] == "true" and json.loads(a["FilterPolicy"]) == {"color": ["red"]}
    assert a["FilterPolicyScope"] == "MessageAttributes"
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicyScope", AttributeValue="MessageBody")
    assert sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]["FilterPolicyScope"] == "MessageBody"
    dlq = f"arn:aws:sqs:us-east-1:000000000000:dlq-{uid()}"
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RedrivePolicy",
                                    AttributeValue=json.dumps({"deadLetterTargetArn": dlq}))
    assert json.loads(sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]["RedrivePolicy"]) == {
        "deadLetterTargetArn": dlq}
    bad = [
        ("RawMessageDelivery", "maybe"),
        ("FilterPolicy", "{not json"),
        ("FilterPolicy", json.dumps({"a": [{"numeric": ["<>", 1]}]})),
        ("FilterPolicy", json.dumps({"a": [{"unknown-op": 1}]})),
        ("FilterPolicyScope", "Everything"),
        ("RedrivePolicy", json.dumps({"nope": 1})),
        ("Unknown", "x"),
    ]
    for name, value in bad:
        with pytest.raises(ClientError) as e:
            sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName=name, AttributeValue=value)
        assert code(e) == "InvalidParameter", (name, value)
    # A nested policy is fine in the body scope but not in the attributes scope.
    nested = json.dumps({"a": {"b": ["c"]}})
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue=nested)
    with pytest.raises(ClientError):
        sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicyScope",
                                        AttributeValue="MessageAttributes")
    with pytest.raises(ClientError) as e:
        sns.get_subscription_attributes(SubscriptionArn=arn + ":" + str(uuid.uuid4()))
    assert code(e) == "NotFound"


# --- delivery -----------------------------------------------------------------------------


def ordered_keys(text):
    return [k for k, _ in json.loads(text, object_pairs_hook=lambda pairs: pairs)]


def test_enveloped_delivery_to_sqs(cumulo, sns, sqs):
    arn = sns.create_topic(Name=f"env-{uid()}")["TopicArn"]
    url, q = make_queue(sqs)
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q)["SubscriptionArn"]
    out = sns.publish(TopicArn=arn, Message="hello\n\"world\"", Subject="Greeting", MessageAttributes={
        "color": {"DataType": "String", "StringValue": "red"},
        "count": {"DataType": "Number", "StringValue": "3"},
        "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
    })
    msgs = drain(sqs, url, expect=1)
    assert len(msgs) == 1
    body = msgs[0]["Body"]
    assert body.startswith('{\n  "Type" : "Notification",\n  "MessageId" : ')
    env = json.loads(body)
    assert ordered_keys(body) == ["Type", "MessageId", "TopicArn", "Subject", "Message", "Timestamp",
                                  "SignatureVersion", "Signature", "SigningCertURL", "UnsubscribeURL",
                                  "MessageAttributes"]
    assert env["MessageId"] == out["MessageId"] and env["TopicArn"] == arn
    assert env["Message"] == "hello\n\"world\"" and env["Subject"] == "Greeting"
    assert env["SignatureVersion"] == "1" and base64.b64decode(env["Signature"])
    assert env["Timestamp"].endswith("Z") and len(env["Timestamp"]) == 24
    assert env["MessageAttributes"] == {
        "color": {"Type": "String", "Value": "red"},
        "count": {"Type": "Number", "Value": "3"},
        "blob": {"Type": "Binary", "Value": base64.b64encode(b"\x00\x01").decode()},
    }
    # Enveloped messages carry their attributes inside the body, not as SQS attributes.
    assert "MessageAttributes" not in msgs[0]
    # The UnsubscribeURL works against cumulo.
    urllib.request.urlopen(env["UnsubscribeURL"]).read()
    assert sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"] == []
    assert sub not in [s["SubscriptionArn"] for s in sns.list_subscriptions()["Subscriptions"]]


def test_raw_delivery_passes_attributes(sns, sqs):
    arn = sns.create_topic(Name=f"raw-{uid()}")["TopicArn"]
    url, q = make_queue(sqs)
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q, Attributes={"RawMessageDelivery": "true"})
    sns.publish(TopicArn=arn, Message="raw body", MessageAttributes={
        "color": {"DataType": "String", "StringValue": "red"},
        "blob": {"DataType": "Binary", "BinaryValue": b"\x07"},
    })
    msgs = drain(sqs, url, expect=1)
    assert [m["Body"] for m in msgs] == ["raw body"]
    attrs = msgs[0]["MessageAttributes"]
    assert attrs["color"] == {"StringValue": "red", "DataType": "String"}
    assert attrs["blob"]["BinaryValue"] == b"\x07"


def test_message_structure_json_per_protocol(sns, sqs):
    arn = sns.create_topic(Name=f"struct-{uid()}")["TopicArn"]
    url, q = make_queue(sqs)
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q, Attributes={"RawMessageDelivery": "true"})
    sns.publish(TopicArn=arn, MessageStructure="json",
                Message=json.dumps({"default": "for everyone", "sqs": "for queues"}))
    assert [m["Body"] for m in drain(sqs, url, expect=1)] == ["for queues"]
    with pytest.raises(ClientError) as e:
        sns.publish(TopicArn=arn, MessageStructure="json", Message=json.dumps({"sqs": "x"}))
    assert "No default entry" in e.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as e:
        sns.publish(TopicArn=arn, MessageStructure="json", Message="not json")
    assert code(e) == "InvalidParameter"


def test_filter_policies_on_attributes(sns, sqs):
    arn = sns.create_topic(Name=f"filt-{uid()}")["TopicArn"]
    policies = {
        "red": {"color": ["red"]},
        "big": {"size": [{"numeric": [">=", 10]}]},
        "not_internal": {"source": [{"anything-but": {"prefix": "internal"}}]},
        "or": {"$or": [{"color": [{"prefix": "bl"}]}, {"vip": [{"exists": True}]}]},
        "tags": {"tags": ["gold"]},
    }
    queues = {}
    for name, policy in policies.items():
        url, q = make_queue(sqs)
        sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q,
                      Attributes={"RawMessageDelivery": "true", "FilterPolicy": json.dumps(policy)})
        queues[name] = url

    def s(v):
        return {"DataType": "String", "StringValue": v}

    def n(v):
        return {"DataType": "Number", "StringValue": str(v)}

    sns.publish(TopicArn=arn, Message="m1", MessageAttributes={"color": s("red"), "size": n(5)})
    sns.publish(TopicArn=arn, Message="m2", MessageAttributes={"color": s("blue"), "size": n(12),
                                                                  "source": s("internal-billing")})
    sns.publish(TopicArn=arn, Message="m3", MessageAttributes={"source": s("web"), "vip": s("yes")})
    sns.publish(TopicArn=arn, Message="m4", MessageAttributes={
        "tags": {"DataType": "String.Array", "StringValue": json.dumps(["silver", "gold"])}})
    got = {name: sorted(m["Body"] for m in drain(sqs, url)) for name, url in queues.items()}
    assert got == {
        "red": ["m1"],
        "big": ["m2"],
        "not_internal": ["m3"],
        "or": ["m2", "m3"],
        "tags": ["m4"],
    }


def test_filter_policy_on_message_body(sns, sqs):
    arn = sns.create_topic(Name=f"body-{uid()}")["TopicArn"]
    url, q = make_queue(sqs)
    policy = {"order": {"status": ["paid"], "total": [{"numeric": [">", 100]}]},
              "customer": {"tier": [{"equals-ignore-case": "GOLD"}]}}
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q, Attributes={
        "FilterPolicy": json.dumps(policy), "FilterPolicyScope": "MessageBody"})
    bodies = [
        {"order": {"status": "paid", "total": 150}, "customer": {"tier": "gold"}},
        {"order": {"status": "paid", "total": 50}, "customer": {"tier": "gold"}},
        {"order": {"status": "open", "total": 150}, "customer": {"tier": "Gold"}},
    ]
    for b in bodies:
        sns.publish(TopicArn=arn, Message=json.dumps(b))
    sns.publish(TopicArn=arn, Message="not json at all")
    msgs = drain(sqs, url)
    assert [json.loads(json.loads(m["Body"])["Message"]) for m in msgs] == [bodies[0]]


def test_fifo_delivery_group_and_dedup(sns, sqs):
    arn = sns.create_topic(Name=f"fifo-{uid()}.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    url, q = make_queue(sqs, fifo=True)
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q, Attributes={"RawMessageDelivery": "true"})
    a = sns.publish(TopicArn=arn, Message="one", MessageGroupId="g1", MessageDeduplicationId="d1")
    b = sns.publish(TopicArn=arn, Message="one again", MessageGroupId="g1", MessageDeduplicationId="d1")
    c = sns.publish(TopicArn=arn, Message="two", MessageGroupId="g1", MessageDeduplicationId="d2")
    assert a["MessageId"] == b["MessageId"]
    assert len(a["SequenceNumber"]) == 20 and int(c["SequenceNumber"]) > int(a["SequenceNumber"])
    msgs = drain(sqs, url, expect=2)
    assert [m["Body"] for m in msgs] == ["one", "two"]
    assert {m["Attributes"]["MessageGroupId"] for m in msgs} == {"g1"}
    assert msgs[0]["Attributes"]["MessageDeduplicationId"] == "d1"
    with pytest.raises(ClientError) as e:
        sns.publish(TopicArn=arn, Message="x", MessageDeduplicationId="d3")
    assert "MessageGroupId" in e.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as e:
        sns.publish(TopicArn=arn, Message="x", MessageGroupId="g")
    assert "ContentBasedDeduplication" in e.value.response["Error"]["Message"]
    sns.set_topic_attributes(TopicArn=arn, AttributeName="ContentBasedDeduplication", AttributeValue="true")
    sns.publish(TopicArn=arn, Message="same", MessageGroupId="g2")
    sns.publish(TopicArn=arn, Message="same", MessageGroupId="g2")
    assert [m["Body"] for m in drain(sqs, url)] == ["same"]
    # Standard topics refuse FIFO parameters and FIFO queues.
    std = sns.create_topic(Name=f"std-{uid()}")["TopicArn"]
    with pytest.raises(ClientError) as e:
        sns.publish(TopicArn=std, Message="x", MessageDeduplicationId="d")
    assert code(e) == "InvalidParameter"
    with pytest.raises(ClientError) as e:
        sns.subscribe(TopicArn=std, Protocol="sqs", Endpoint=q)
    assert code(e) == "InvalidParameter"


def test_fifo_envelope_has_sequence_number(sns, sqs):
    arn = sns.create_topic(Name=f"fenv-{uid()}.fifo",
                           Attributes={"FifoTopic": "true", "ContentBasedDeduplication": "true"})["TopicArn"]
    url, q = make_queue(sqs, fifo=True)
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q)
    out = sns.publish(TopicArn=arn, Message="m", MessageGroupId="g")
    body = drain(sqs, url, expect=1)[0]["Body"]
    assert ordered_keys(body)[:3] == ["Type", "MessageId", "SequenceNumber"]
    assert json.loads(body)["SequenceNumber"] == out["SequenceNumber"]


def test_publish_validation(sns):
    arn = sns.create_topic(Name=f"pv-{uid()}")["TopicArn"]
    cases = [
        dict(Message=""),
        dict(Message="x" * 262145),
        dict(Message="x", Subject="line\nbreak"),
        dict(Message="x", MessageAttributes={"a": {"DataType": "Number", "StringValue": "abc"}}),
        dict(Message="x", MessageAttributes={"a": {"DataType": "Text", "StringValue": "v"}}),
        dict(Message="x", MessageAttributes={"AWS.reserved": {"DataType": "String", "StringValue": "v"}}),
        dict(Message="x", MessageAttributes={"a": {"DataType": "String", "StringValue": ""}}),
        dict(Message="x", MessageAttributes={"a": {"DataType": "String.Array", "StringValue": "nope"}}),
    ]
    for kwargs in cases:
        with pytest.raises(ClientError) as e:
            sns.publish(TopicArn=arn, **kwargs)
        assert code(e) == "InvalidParameter", kwargs
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_publish_batch(sns, sqs):
    arn = sns.create_topic(Name=f"batch-{uid()}")["TopicArn"]
    url, q = make_queue(sqs)
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q, Attributes={"RawMessageDelivery": "true"})
    out = sns.publish_batch(TopicArn=arn, PublishBatchRequestEntries=[
        {"Id": "ok1", "Message": "first", "MessageAttributes": {"k": {"DataType": "String", "StringValue": "v"}}},
        {"Id": "bad", "Message": "x", "MessageAttributes": {"k": {"DataType": "Number", "StringValue": "NaNx"}}},
        {"Id": "ok2", "Message": "second"},
    ])
    assert [s["Id"] for s in out["Successful"]] == ["ok1", "ok2"]
    assert out["Failed"][0]["Id"] == "bad" and out["Failed"][0]["Code"] == "InvalidParameter"
    assert out["Failed"][0]["SenderFault"] is True
    msgs = drain(sqs, url, expect=2)
    assert sorted(m["Body"] for m in msgs) == ["first", "second"]
    with pytest.raises(ClientError) as e:
        sns.publish_batch(TopicArn=arn, PublishBatchRequestEntries=[
            {"Id": "same", "Message": "a"}, {"Id": "same", "Message": "b"}])
    assert code(e) == "BatchEntryIdsNotDistinct"
    with pytest.raises(ClientError) as e:
        sns.publish_batch(TopicArn=arn, PublishBatchRequestEntries=[
            {"Id": f"i{i}", "Message": "a"} for i in range(11)])
    assert code(e) == "TooManyEntriesInBatchRequest"
    with pytest.raises(ClientError) as e:
        sns.publish_batch(TopicArn=arn, PublishBatchRequestEntries=[])
    assert code(e) == "EmptyBatchRequest"


def test_redrive_policy_sends_undeliverable_to_dlq(sns, sqs):
    arn = sns.create_topic(Name=f"redrive-{uid()}")["TopicArn"]
    dlq_url, dlq = make_queue(sqs)
    gone = f"arn:aws:sqs:us-east-1:000000000000:gone-{uid()}"
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=gone, Attributes={
        "RawMessageDelivery": "true", "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq})})
    sns.publish(TopicArn=arn, Message="lost")
    assert [m["Body"] for m in drain(sqs, dlq_url, expect=1)] == ["lost"]


class _Recorder(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):
        length = int(self.headers["Content-Length"])
        _Recorder.received.append((dict(self.headers), self.rfile.read(length).decode()))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def _wait_for(predicate, timeout=10):
    import time
    deadline = time.time() + timeout
    while not predicate() and time.time() < deadline:
        time.sleep(0.05)
    return predicate()


def test_http_endpoint_confirmation_and_notification(cumulo, sns):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _Recorder.received.clear()
        base = f"http://127.0.0.1:{server.server_port}"
        arn = sns.create_topic(Name=f"http-{uid()}")["TopicArn"]
        assert sns.subscribe(TopicArn=arn, Protocol="http", Endpoint=base + "/a")["SubscriptionArn"] == \
            "pending confirmation"
        assert _wait_for(lambda: len(_Recorder.received) == 1)
        headers, body = _Recorder.received[0]
        assert headers["x-amz-sns-message-type"] == "SubscriptionConfirmation"
        conf = json.loads(body)
        assert conf["Type"] == "SubscriptionConfirmation" and conf["TopicArn"] == arn
        assert ordered_keys(body)[:4] == ["Type", "MessageId", "Token", "TopicArn"]
        # Confirm the first through its SubscribeURL, the second with the CLI and the token.
        urllib.request.urlopen(conf["SubscribeURL"]).read()
        sns.subscribe(TopicArn=arn, Protocol="http", Endpoint=base + "/b")
        assert _wait_for(lambda: len(_Recorder.received) == 2)
        token = json.loads(_Recorder.received[1][1])["Token"]
        # Subscribing a pending endpoint again resends its confirmation.
        sns.subscribe(TopicArn=arn, Protocol="http", Endpoint=base + "/b")
        assert _wait_for(lambda: len(_Recorder.received) == 3)
        assert json.loads(_Recorder.received[2][1])["Token"] == token
        confirmed = cumulo.aws("sns", "confirm-subscription", "--topic-arn", arn, "--token", token)
        assert confirmed["SubscriptionArn"].startswith(arn + ":")
        subs = sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]
        assert all(s["SubscriptionArn"].startswith(arn + ":") for s in subs) and len(subs) == 2
        _Recorder.received.clear()
        sns.publish(TopicArn=arn, Message="over http")
        assert _wait_for(lambda: len(_Recorder.received) == 2)
        for headers, body in _Recorder.received:
            assert headers["x-amz-sns-message-type"] == "Notification"
            assert headers["x-amz-sns-topic-arn"] == arn
            assert json.loads(body)["Message"] == "over http"
    finally:
        server.shutdown()


def test_unimplemented_operation_answers_501(sns):
    with pytest.raises(ClientError) as e:
        sns.list_platform_applications()
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    assert "ListPlatformApplications" in e.value.response["Error"]["Message"]


# --- AWS CLI and persistence --------------------------------------------------------------


def test_cli_round_trip(cumulo, sqs):
    url, q = make_queue(sqs)
    name = f"cli-{uid()}"
    arn = cumulo.aws("sns", "create-topic", "--name", name, "--tags", "Key=team,Value=a")["TopicArn"]
    assert arn in [t["TopicArn"] for t in cumulo.aws("sns", "list-topics")["Topics"]]
    cumulo.aws("sns", "set-topic-attributes", "--topic-arn", arn, "--attribute-name", "DisplayName",
               "--attribute-value", "CLI")
    assert cumulo.aws("sns", "get-topic-attributes", "--topic-arn", arn)["Attributes"]["DisplayName"] == "CLI"
    sub = cumulo.aws("sns", "subscribe", "--topic-arn", arn, "--protocol", "sqs", "--notification-endpoint", q,
                     "--attributes", "RawMessageDelivery=true")["SubscriptionArn"]
    cumulo.aws("sns", "set-subscription-attributes", "--subscription-arn", sub, "--attribute-name",
               "FilterPolicy", "--attribute-value", json.dumps({"kind": ["a"]}))
    attrs = cumulo.aws("sns", "get-subscription-attributes", "--subscription-arn", sub)["Attributes"]
    assert json.loads(attrs["FilterPolicy"]) == {"kind": ["a"]}
    assert [s["SubscriptionArn"] for s in cumulo.aws("sns", "list-subscriptions-by-topic", "--topic-arn", arn)[
        "Subscriptions"]] == [sub]
    assert sub in [s["SubscriptionArn"] for s in cumulo.aws("sns", "list-subscriptions")["Subscriptions"]]
    cumulo.aws("sns", "publish", "--topic-arn", arn, "--message", "skip me", "--message-attributes",
               '{"kind": {"DataType": "String", "StringValue": "b"}}')
    out = cumulo.aws("sns", "publish", "--topic-arn", arn, "--message", "from cli", "--message-attributes",
                     '{"kind": {"DataType": "String", "StringValue": "a"}}')
    assert out["MessageId"]
    batch = cumulo.aws("sns", "publish-batch", "--topic-arn", arn, "--publish-batch-request-entries",
                       json.dumps([{"Id": "1", "Message": "b1", "MessageAttributes": {
                           "kind": {"DataType": "String", "StringValue": "a"}}}]))
    assert batch["Successful"][0]["Id"] == "1"
    assert sorted(m["Body"] for m in drain(sqs, url, expect=2)) == ["b1", "from cli"]
    cumulo.aws("sns", "tag-resource", "--resource-arn", arn, "--tags", "Key=env,Value=dev")
    tags = cumulo.aws("sns", "list-tags-for-resource", "--resource-arn", arn)["Tags"]
    assert sorted(t["Key"] for t in tags) == ["env", "team"]
    cumulo.aws("sns", "untag-resource", "--resource-arn", arn, "--tag-keys", "env")
    cumulo.aws("sns", "unsubscribe", "--subscription-arn", sub)
    cumulo.aws("sns", "delete-topic", "--topic-arn", arn)
    proc = cumulo.aws("sns", "get-topic-attributes", "--topic-arn", arn, check=False)
    assert proc.returncode != 0 and "NotFound" in proc.stderr


def test_topics_and_subscriptions_survive_kill9(fresh_server):
    fresh_server.start()
    sns, sqs = fresh_server.client("sns"), fresh_server.client("sqs")
    arn = sns.create_topic(Name="durable", Attributes={"DisplayName": "D"})["TopicArn"]
    url, q = make_queue(sqs)
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=q, Attributes={
        "RawMessageDelivery": "true", "FilterPolicy": json.dumps({"k": ["yes"]})})["SubscriptionArn"]
    fresh_server.kill9()
    fresh_server.start()
    sns, sqs = fresh_server.client("sns"), fresh_server.client("sqs")
    assert sns.get_topic_attributes(TopicArn=arn)["Attributes"]["DisplayName"] == "D"
    assert sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]["RawMessageDelivery"] == "true"
    sns.publish(TopicArn=arn, Message="filtered out", MessageAttributes={"k": {"DataType": "String", "StringValue": "no"}})
    sns.publish(TopicArn=arn, Message="kept", MessageAttributes={"k": {"DataType": "String", "StringValue": "yes"}})
    assert [m["Body"] for m in drain(sqs, url, expect=1)] == ["kept"]


def test_query_body_is_read_only_as_a_form(cumulo):
    auth = [("Authorization", "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/sns/aws4_request, "
                              "SignedHeaders=host, Signature=00"), ("X-Amz-Date", "20240101T000000Z")]
    body = b"Action=ListTopics&Version=2010-03-31"
    ok = cumulo.raw("POST", "/", [("Content-Type", "application/x-www-form-urlencoded")] + auth, body)
    assert ok.status == 200 and b"<ListTopicsResponse" in ok.body
    bad = cumulo.raw("POST", "/", [("Content-Type", "application/json")] + auth, body)
    assert bad.status == 400 and bad.error_code() == "MissingAction"
    unknown = cumulo.raw("POST", "/", [("Content-Type", "application/x-www-form-urlencoded")] + auth,
                         b"Action=NoSuchThing&Version=2010-03-31")
    assert unknown.status == 400 and unknown.error_code() == "InvalidAction"
