"""DynamoDB Streams through boto3's `dynamodbstreams` client: the records every item write makes
(view types, AWS's record shape), iterators, errors as AWS words them, disabling a stream, and
records surviving a restart and kill -9."""
import uuid

import pytest
from botocore.exceptions import ClientError


def uniq(prefix="s"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def make_table(ddb, view="NEW_AND_OLD_IMAGES", name=None):
    name = name or uniq()
    t = ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": view})["TableDescription"]
    return name, t["LatestStreamArn"]


def read_all(streams, arn, kind="TRIM_HORIZON", **kw):
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType=kind, **kw)["ShardIterator"]
    return streams.get_records(ShardIterator=it)


def test_every_write_records_in_order_with_aws_shape(cumulo):
    ddb, streams = cumulo.client("dynamodb"), cumulo.client("dynamodbstreams")
    name, arn = make_table(ddb)
    assert ddb.describe_table(TableName=name)["Table"]["LatestStreamArn"] == arn
    ddb.put_item(TableName=name, Item={"id": {"S": "a"}, "v": {"N": "1"}})
    ddb.put_item(TableName=name, Item={"id": {"S": "a"}, "v": {"N": "1"}})  # unchanged: no record
    ddb.update_item(TableName=name, Key={"id": {"S": "a"}}, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": {"N": "2"}})
    ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": {"id": {"S": "b"}}}}]})
    ddb.transact_write_items(TransactItems=[{"Delete": {"TableName": name, "Key": {"id": {"S": "b"}}}}])
    ddb.delete_item(TableName=name, Key={"id": {"S": "a"}})
    records = read_all(streams, arn)["Records"]
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY", "INSERT", "REMOVE", "REMOVE"]
    first = records[0]
    assert first["eventSource"] == "aws:dynamodb" and first["eventVersion"] == "1.1"
    assert first["awsRegion"] == "us-east-1" and len(first["eventID"]) == 32
    d = first["dynamodb"]
    assert d["Keys"] == {"id": {"S": "a"}} and d["NewImage"] == {"id": {"S": "a"}, "v": {"N": "1"}}
    assert "OldImage" not in d and d["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert d["SizeBytes"] == 3 + 6  # Keys + NewImage in DynamoDB item bytes (the number 1 is 2)
    assert records[1]["dynamodb"]["OldImage"]["v"] == {"N": "1"}
    assert records[1]["dynamodb"]["NewImage"]["v"] == {"N": "2"}
    seqs = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert seqs == sorted(seqs) and len(set(seqs)) == 5
    # AFTER_SEQUENCE_NUMBER / AT_SEQUENCE_NUMBER / LATEST and Limit with NextShardIterator.
    after = read_all(streams, arn, "AFTER_SEQUENCE_NUMBER", SequenceNumber=records[2]["dynamodb"]["SequenceNumber"])
    assert [r["eventName"] for r in after["Records"]] == ["REMOVE", "REMOVE"]
    at = read_all(streams, arn, "AT_SEQUENCE_NUMBER", SequenceNumber=records[1]["dynamodb"]["SequenceNumber"])
    assert len(at["Records"]) == 4
    latest = read_all(streams, arn, "LATEST")
    assert latest["Records"] == [] and latest["NextShardIterator"]
    ddb.put_item(TableName=name, Item={"id": {"S": "c"}})
    got = streams.get_records(ShardIterator=latest["NextShardIterator"], Limit=1)
    assert [r["dynamodb"]["Keys"]["id"]["S"] for r in got["Records"]] == ["c"]


@pytest.mark.parametrize("view,has_new,has_old", [
    ("KEYS_ONLY", False, False), ("NEW_IMAGE", True, False), ("OLD_IMAGE", False, True)])
def test_view_types(cumulo, view, has_new, has_old):
    ddb, streams = cumulo.client("dynamodb"), cumulo.client("dynamodbstreams")
    name, arn = make_table(ddb, view)
    ddb.put_item(TableName=name, Item={"id": {"S": "a"}, "v": {"S": "1"}})
    ddb.put_item(TableName=name, Item={"id": {"S": "a"}, "v": {"S": "2"}})
    modify = read_all(streams, arn)["Records"][1]["dynamodb"]
    assert ("NewImage" in modify) == has_new and ("OldImage" in modify) == has_old
    assert modify["StreamViewType"] == view and modify["Keys"] == {"id": {"S": "a"}}


def test_list_describe_disable_and_errors(cumulo):
    ddb, streams = cumulo.client("dynamodb"), cumulo.client("dynamodbstreams")
    name, arn = make_table(ddb, "KEYS_ONLY")
    ddb.put_item(TableName=name, Item={"id": {"S": "a"}})
    listed = streams.list_streams(TableName=name)["Streams"]
    assert listed == [{"StreamArn": arn, "TableName": name, "StreamLabel": arn.rsplit("/", 1)[1]}]
    desc = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert desc["StreamStatus"] == "ENABLED" and desc["TableName"] == name
    assert desc["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert "EndingSequenceNumber" not in desc["Shards"][0]["SequenceNumberRange"]
    shard = desc["Shards"][0]["ShardId"]
    assert streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=shard)["StreamDescription"]["Shards"] == []
    ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    desc = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert desc["StreamStatus"] == "DISABLED"
    assert "EndingSequenceNumber" in desc["Shards"][0]["SequenceNumberRange"]
    ddb.put_item(TableName=name, Item={"id": {"S": "b"}})  # no stream now: no record
    got = read_all(streams, arn)
    assert len(got["Records"]) == 1 and "NextShardIterator" not in got  # closed shard, read to its end

    missing = arn.rsplit("/", 1)[0] + "/2024-11-18T14:36:44.149"
    with pytest.raises(ClientError) as e:
        streams.describe_stream(StreamArn=missing)
    assert e.value.response["Error"] == {
        "Code": "ResourceNotFoundException",
        "Message": f"Requested resource not found: Stream: {missing} not found"}
    with pytest.raises(ClientError) as e:
        streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="AT_SEQUENCE_NUMBER")
    assert e.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        streams.get_records(ShardIterator="not-an-iterator")
    assert e.value.response["Error"]["Code"] == "ValidationException"


def test_records_survive_restart_and_kill_9(fresh_server):
    server = fresh_server.start()
    ddb = server.client("dynamodb")
    name, arn = make_table(ddb)
    ddb.put_item(TableName=name, Item={"id": {"S": "a"}})
    server.stop()
    server.start()
    ddb = server.client("dynamodb")
    ddb.put_item(TableName=name, Item={"id": {"S": "b"}})
    server.kill9()
    server.start()
    records = read_all(server.client("dynamodbstreams"), arn)["Records"]
    assert [r["dynamodb"]["Keys"]["id"]["S"] for r in records] == ["a", "b"]
    seqs = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert seqs[0] < seqs[1]


# ------------------------------------------------------------ Lambda event source mappings

import io
import json
import time
import zipfile

ROLE = "arn:aws:iam::000000000000:role/lambda-role"

NODE_RECORDER = """
exports.handler = async (event) => {
  console.log('GOT ' + JSON.stringify(event));
  if (event.Records.some(r => r.dynamodb && r.dynamodb.Keys.id.S === 'fail')) { throw new Error('refused'); }
  return {};
};
"""


def node_function(lam):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.js", NODE_RECORDER)
    name = uniq("fn")
    lam.create_function(FunctionName=name, Runtime="nodejs20.x", Role=ROLE, Handler="index.handler",
                        Code={"ZipFile": buf.getvalue()})
    lam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    return name


def batches(logs, function, want, timeout=20):
    """The events the function logged (`GOT <event>` lines), once `want` records arrived."""
    deadline = time.time() + timeout
    while True:
        got = []
        try:
            for s in logs.describe_log_streams(logGroupName=f"/aws/lambda/{function}")["logStreams"]:
                for e in logs.get_log_events(logGroupName=f"/aws/lambda/{function}",
                                             logStreamName=s["logStreamName"], startFromHead=True)["events"]:
                    if "GOT " in e["message"]:
                        got.append((e["timestamp"], json.loads(e["message"].split("GOT ", 1)[1])))
        except ClientError:
            pass
        got = [b for _, b in sorted(got, key=lambda x: x[0])]
        if sum(len(b["Records"]) for b in got) >= want or time.time() > deadline:
            return got
        time.sleep(0.2)


def test_mapping_delivers_stream_records_in_order_with_filters_and_retries(cumulo):
    ddb, lam, logs, sqs = (cumulo.client(s) for s in ("dynamodb", "lambda", "logs", "sqs"))
    name, arn = make_table(ddb)
    ddb.put_item(TableName=name, Item={"id": {"S": "before"}})  # LATEST: not delivered
    fn = node_function(lam)
    dlq = sqs.create_queue(QueueName=uniq("dlq"))["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    m = lam.create_event_source_mapping(
        EventSourceArn=arn, FunctionName=fn, StartingPosition="LATEST", BatchSize=10,
        MaximumRetryAttempts=1, DestinationConfig={"OnFailure": {"Destination": dlq_arn}},
        FilterCriteria={"Filters": [{"Pattern": json.dumps({"eventName": ["INSERT", "MODIFY"]})}]})
    assert m["StartingPosition"] == "LATEST" and m["MaximumRetryAttempts"] == 1
    assert m["DestinationConfig"] == {"OnFailure": {"Destination": dlq_arn}}
    assert lam.get_event_source_mapping(UUID=m["UUID"])["FilterCriteria"]["Filters"][0]["Pattern"]
    ddb.put_item(TableName=name, Item={"id": {"S": "a"}, "v": {"N": "1"}})
    got = batches(logs, fn, 1)
    ddb.update_item(TableName=name, Key={"id": {"S": "a"}}, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": {"N": "2"}})
    ddb.delete_item(TableName=name, Key={"id": {"S": "a"}})  # filtered out
    ddb.put_item(TableName=name, Item={"id": {"S": "fail"}})  # refused twice, then to the DLQ
    ddb.put_item(TableName=name, Item={"id": {"S": "z"}})
    got = batches(logs, fn, 5)
    records = [r for b in got for r in b["Records"]]
    keys = [(r["eventName"], r["dynamodb"]["Keys"]["id"]["S"]) for r in records]
    # "fail" arrives twice (first try and one retry, maybe batched with "z"), then z alone after it.
    assert keys[:2] == [("INSERT", "a"), ("MODIFY", "a")], keys
    assert keys.count(("INSERT", "fail")) == 2 and keys[-1] == ("INSERT", "z"), keys
    assert "before" not in [k for _, k in keys] and ("REMOVE", "a") not in keys
    first = records[0]
    assert first["eventSourceARN"] == arn and first["eventSource"] == "aws:dynamodb"
    assert first["dynamodb"]["NewImage"] == {"id": {"S": "a"}, "v": {"N": "1"}}
    msgs = sqs.receive_message(QueueUrl=dlq, WaitTimeSeconds=5)["Messages"]
    info = json.loads(msgs[0]["Body"])
    assert info["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert info["DDBStreamBatchInfo"]["streamArn"] == arn and info["DDBStreamBatchInfo"]["batchSize"] >= 1
    lam.update_event_source_mapping(UUID=m["UUID"], Enabled=False)
    assert lam.get_event_source_mapping(UUID=m["UUID"])["State"] == "Disabled"
    lam.delete_event_source_mapping(UUID=m["UUID"])


def test_mapping_errors(cumulo):
    ddb, lam = cumulo.client("dynamodb"), cumulo.client("lambda")
    _, arn = make_table(ddb)
    fn = node_function(lam)
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(
            EventSourceArn="arn:aws:kinesis:us-east-1:000000000000:stream/s", FunctionName=fn,
            StartingPosition="LATEST")
    assert e.value.response["Error"]["Code"] == "InvalidParameterValueException"
    assert "Kinesis is not emulated" in e.value.response["Error"]["Message"]
    def refused(**kw):
        with pytest.raises(ClientError) as e:
            lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, **kw)
        return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]

    # Codes and messages as recorded against AWS (aws-recordings/lambda_/event_source_mapping).
    assert refused() == ("InvalidParameterValueException",
                         "1 validation error detected: Value null at 'startingPosition' failed to satisfy constraint: Member must not be null.")
    assert refused(StartingPosition="AT_TIMESTAMP") == (
        "InvalidParameterValueException", f"Unsupported starting position for arn type: {arn}")
    assert refused(StartingPosition="LATEST", FilterCriteria={"Filters": [{"Pattern": '{"eventName": "INSERT"}'}]}) == (
        "InvalidParameterValueException", "Invalid filter pattern definition.")
    missing = arn.rsplit("/", 1)[0] + "/2025-02-22T03:03:25.490"
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=missing, FunctionName=fn, StartingPosition="LATEST")
    assert e.value.response["Error"]["Message"] == f"Stream not found: {missing}"
    assert lam.list_event_source_mappings(EventSourceArn=arn)["EventSourceMappings"] == []
    first = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="LATEST")
    assert first["BatchSize"] == 100 and first["MaximumRetryAttempts"] == -1
    assert first["DestinationConfig"] == {"OnFailure": {}} and first["BisectBatchOnFunctionError"] is False
    assert refused(StartingPosition="LATEST") == ("ResourceConflictException", (
        f'The event source arn (" {arn} ") and function (" {fn} ") provided mapping already exists. '
        f'Please update or delete the existing mapping with UUID {first["UUID"]}'))
    lam.delete_event_source_mapping(UUID=first["UUID"])


# ------------------------------------------------------------------ SAM and CloudFormation

SAM_TEMPLATE = """
Transform: AWS::Serverless-2016-10-31
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
      KeySchema: [{AttributeName: id, KeyType: HASH}]
      BillingMode: PAY_PER_REQUEST
      StreamSpecification: {StreamViewType: NEW_IMAGE}
  Recorder:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      InlineCode: |
        exports.handler = async (event) => { console.log('GOT ' + JSON.stringify(event)); return {}; };
      Events:
        Changes:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt Table.StreamArn
            StartingPosition: TRIM_HORIZON
            BatchSize: BATCH
            FilterCriteria: {Filters: [{Pattern: '{"eventName": ["INSERT"]}'}]}
Outputs:
  Table: {Value: !Ref Table}
  StreamArn: {Value: !GetAtt Table.StreamArn}
  Function: {Value: !Ref Recorder}
"""


def deploy(cumulo, tmp_path, stack, body, check=True):
    path = tmp_path / f"{uniq('t')}.yaml"
    path.write_text(body)
    return cumulo.aws("cloudformation", "deploy", "--template-file", str(path), "--stack-name", stack,
                      "--capabilities", "CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND", check=check)


def test_sam_dynamodb_event_deploys_delivers_updates_and_deletes(cumulo, tmp_path):
    cfn, ddb, lam, logs = (cumulo.client(s) for s in ("cloudformation", "dynamodb", "lambda", "logs"))
    stack = uniq("sam-ddb")
    deploy(cumulo, tmp_path, stack, SAM_TEMPLATE.replace("BATCH", "5"))
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    assert ddb.describe_table(TableName=out["Table"])["Table"]["LatestStreamArn"] == out["StreamArn"]
    mappings = lam.list_event_source_mappings(FunctionName=out["Function"])["EventSourceMappings"]
    assert len(mappings) == 1 and mappings[0]["EventSourceArn"] == out["StreamArn"]
    assert mappings[0]["BatchSize"] == 5 and mappings[0]["StartingPosition"] == "TRIM_HORIZON"
    ddb.put_item(TableName=out["Table"], Item={"id": {"S": "one"}})
    ddb.delete_item(TableName=out["Table"], Key={"id": {"S": "one"}})
    ddb.put_item(TableName=out["Table"], Item={"id": {"S": "two"}})
    got = batches(logs, out["Function"], 2)
    records = [r for b in got for r in b["Records"]]
    assert [r["dynamodb"]["NewImage"]["id"]["S"] for r in records] == ["one", "two"]
    assert all(r["eventName"] == "INSERT" and r["eventSourceARN"] == out["StreamArn"] for r in records)

    deploy(cumulo, tmp_path, stack, SAM_TEMPLATE.replace("BATCH", "7"))
    assert lam.get_event_source_mapping(UUID=mappings[0]["UUID"])["BatchSize"] == 7

    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    assert lam.list_event_source_mappings(EventSourceArn=out["StreamArn"])["EventSourceMappings"] == []
    with pytest.raises(ClientError):
        ddb.describe_table(TableName=out["Table"])


def test_sam_kinesis_event_fails_the_change_set_naming_kinesis(cumulo):
    body = """
Transform: AWS::Serverless-2016-10-31
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      InlineCode: "exports.handler = async () => 1;"
      Events:
        Records:
          Type: Kinesis
          Properties: {Stream: arn:aws:kinesis:us-east-1:000000000000:stream/s, StartingPosition: LATEST}
"""
    cfn = cumulo.client("cloudformation")
    stack = uniq("sam-kin")
    cfn.create_change_set(StackName=stack, ChangeSetName="cs", ChangeSetType="CREATE", TemplateBody=body,
                          Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    deadline = time.time() + 30
    while time.time() < deadline:
        cs = cfn.describe_change_set(StackName=stack, ChangeSetName="cs")
        if cs["Status"] in ("FAILED", "CREATE_COMPLETE"):
            break
        time.sleep(0.2)
    assert cs["Status"] == "FAILED"
    assert cs["StatusReason"] == (
        "Transform AWS::Serverless-2016-10-31 failed with: Invalid Serverless Application "
        "Specification document. Number of errors found: 1. Resource with id [Fn] is invalid. "
        "Event with id [Records] is invalid. Event type 'Kinesis' is not supported: Amazon Kinesis "
        "is not emulated by cumulo.")
    # A mapping made through the API (or a literal template resource) is refused the same way.
    with pytest.raises(ClientError) as e:
        cumulo.client("lambda").create_event_source_mapping(
            EventSourceArn="arn:aws:kinesis:us-east-1:000000000000:stream/s", FunctionName="f",
            StartingPosition="LATEST")
    assert "Kinesis is not emulated" in e.value.response["Error"]["Message"]


def test_ttl_deletion_records_a_service_remove(cumulo):
    ddb, streams = cumulo.client("dynamodb"), cumulo.client("dynamodbstreams")
    name, arn = make_table(ddb, "OLD_IMAGE")
    ddb.put_item(TableName=name, Item={"id": {"S": "old"}, "exp": {"N": str(int(time.time()) - 60)}})
    ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    assert "Item" not in ddb.get_item(TableName=name, Key={"id": {"S": "old"}})
    remove = read_all(streams, arn)["Records"][-1]
    assert remove["eventName"] == "REMOVE" and remove["dynamodb"]["OldImage"]["id"] == {"S": "old"}
    assert remove["userIdentity"] == {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}


def test_mapping_resumes_from_its_checkpoint_after_restart(fresh_server):
    server = fresh_server.start()
    ddb, lam = server.client("dynamodb"), server.client("lambda")
    name, arn = make_table(ddb)
    fn = node_function(lam)
    lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON")
    ddb.put_item(TableName=name, Item={"id": {"S": "first"}})
    assert len(batches(server.client("logs"), fn, 1)) == 1
    time.sleep(0.5)  # the checkpoint is written once the invocation returns (at-least-once, as AWS)
    server.kill9()
    server.start()
    ddb = server.client("dynamodb")
    ddb.put_item(TableName=name, Item={"id": {"S": "second"}})
    server.client("lambda").list_functions()  # Lambda starts, and with it the mapping's poller
    got = batches(server.client("logs"), fn, 2)
    keys = [r["dynamodb"]["Keys"]["id"]["S"] for b in got for r in b["Records"]]
    assert keys == ["first", "second"]  # "first" is not delivered again


def test_filter_criteria_applies_to_sqs_mappings_too(cumulo):
    """Messages no filter matches are deleted without an invocation; a JSON body is matched as
    the JSON it holds, as on AWS."""
    lam, logs, sqs = (cumulo.client(s) for s in ("lambda", "logs", "sqs"))
    fn = node_function(lam)
    url = sqs.create_queue(QueueName=uniq("q"))["QueueUrl"]
    q_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    m = lam.create_event_source_mapping(
        EventSourceArn=q_arn, FunctionName=fn, BatchSize=1,
        FilterCriteria={"Filters": [{"Pattern": json.dumps({"body": {"kind": ["keep"]}})}]})
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"kind": "drop"}))
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"kind": "keep"}))
    got = batches(logs, fn, 1)
    time.sleep(0.5)
    bodies = [json.loads(r["body"])["kind"] for b in got for r in b["Records"]]
    assert bodies == ["keep"]
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages",
                                                                   "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
    assert attrs == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}
    lam.delete_event_source_mapping(UUID=m["UUID"])


def test_bisect_isolates_the_failing_record_and_sns_receives_it(cumulo):
    ddb, lam, logs, sqs, sns = (cumulo.client(s) for s in ("dynamodb", "lambda", "logs", "sqs", "sns"))
    name, arn = make_table(ddb, "KEYS_ONLY")
    fn = node_function(lam)
    topic = sns.create_topic(Name=uniq("failed"))["TopicArn"]
    url = sqs.create_queue(QueueName=uniq("sink"))["QueueUrl"]
    q_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn, Attributes={"RawMessageDelivery": "true"})
    ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": {"id": {"S": k}}}} for k in ("fail", "ok")]})
    lam.create_event_source_mapping(
        EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON", BatchSize=2,
        MaximumRetryAttempts=0, BisectBatchOnFunctionError=True,
        DestinationConfig={"OnFailure": {"Destination": topic}})
    got = batches(logs, fn, 4)
    keys = [[r["dynamodb"]["Keys"]["id"]["S"] for r in b["Records"]] for b in got]
    assert keys == [["fail", "ok"], ["fail"], ["ok"]], keys
    info = json.loads(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5)["Messages"][0]["Body"])
    assert info["DDBStreamBatchInfo"]["batchSize"] == 1
    assert info["requestContext"]["condition"] == "RetryAttemptsExhausted"
