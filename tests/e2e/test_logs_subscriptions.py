"""CloudWatch Logs subscription filters (Put/Describe/DeleteSubscriptionFilter) and
AWS::Logs::SubscriptionFilter: stored and reported, refused with the codes and messages AWS answered
(../shared/aws-recordings/logs/test_logs_subscription_filters.snapshot.json), kept across a restart,
and deployed, updated and deleted through `aws cloudformation deploy`; a Lambda destination
receives the matching events (Kinesis and Firehose destinations are stored only, see README)."""
import uuid

import botocore.exceptions
import pytest

FN = "arn:aws:lambda:us-east-1:000000000000:function:sink"
STREAM = "arn:aws:kinesis:us-east-1:000000000000:stream/sink"
ROLE = "arn:aws:iam::000000000000:role/logs-to-kinesis"
WAIT = {"Delay": 1, "MaxAttempts": 120}


def uid():
    return uuid.uuid4().hex[:8]


def error(call, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call(**kw)
    err = e.value.response["Error"]
    return err["Code"], err["Message"]


def shown(filters):
    return [{k: v for k, v in f.items() if k != "creationTime"} for f in filters]


@pytest.fixture(scope="module")
def logs(cumulo):
    return cumulo.client("logs")


def test_put_describe_replace_delete(logs):
    group = f"/sub/{uid()}"
    logs.create_log_group(logGroupName=group)
    assert logs.describe_subscription_filters(logGroupName=group)["subscriptionFilters"] == []
    logs.put_subscription_filter(logGroupName=group, filterName="errors", filterPattern="ERROR", destinationArn=FN)
    logs.put_subscription_filter(logGroupName=group, filterName="json", filterPattern='{ $.level = "warn" }',
                                 destinationArn=STREAM, roleArn=ROLE, distribution="Random")
    got = logs.describe_subscription_filters(logGroupName=group)["subscriptionFilters"]
    assert shown(got) == [
        {"filterName": "errors", "logGroupName": group, "filterPattern": "ERROR", "destinationArn": FN,
         "distribution": "ByLogStream", "applyOnTransformedLogs": False},
        {"filterName": "json", "logGroupName": group, "filterPattern": '{ $.level = "warn" }',
         "destinationArn": STREAM, "roleArn": ROLE, "distribution": "Random", "applyOnTransformedLogs": False},
    ]
    # A put of an existing name replaces it (and the limit of two does not count it twice).
    logs.put_subscription_filter(logGroupName=group, filterName="errors", filterPattern="[]", destinationArn=FN)
    got = logs.describe_subscription_filters(logGroupName=group, filterNamePrefix="err")["subscriptionFilters"]
    assert [(f["filterName"], f["filterPattern"]) for f in got] == [("errors", "[]")]
    assert error(logs.put_subscription_filter, logGroupName=group, filterName="third", filterPattern="",
                 destinationArn=FN) == ("LimitExceededException", "Resource limit exceeded.")

    logs.delete_subscription_filter(logGroupName=group, filterName="errors")
    assert [f["filterName"] for f in logs.describe_subscription_filters(logGroupName=group)["subscriptionFilters"]] == ["json"]
    assert error(logs.delete_subscription_filter, logGroupName=group, filterName="errors") == (
        "ResourceNotFoundException", "The specified subscription filter does not exist.")


def test_refusals_change_nothing(logs):
    group = f"/sub/{uid()}"
    logs.create_log_group(logGroupName=group)
    missing = ("ResourceNotFoundException", "The specified log group does not exist.")
    assert error(logs.describe_subscription_filters, logGroupName="/no/such/group") == missing
    assert error(logs.delete_subscription_filter, logGroupName="/no/such/group", filterName="x") == missing
    assert error(logs.put_subscription_filter, logGroupName="/no/such/group", filterName="x", filterPattern="",
                 destinationArn=FN) == missing
    assert error(logs.put_subscription_filter, logGroupName=group, filterName="x", filterPattern="",
                 destinationArn=STREAM) == (
        "InvalidParameterException", "destinationArn for vendor kinesis cannot be used without roleArn")
    assert error(logs.put_subscription_filter, logGroupName=group, filterName="x", filterPattern="",
                 destinationArn="arn:aws:lambda:us-east-1:111111111111:function:elsewhere") == (
        "AccessDeniedException",
        "Cross-account lambda invocation passing is not allowed. You must use DestinationPolicies to create cross account lambda triggers.")
    code, message = error(logs.put_subscription_filter, logGroupName=group, filterName="x", filterPattern="{ $.x = ",
                          destinationArn=FN)
    assert code == "InvalidParameterException" and message.startswith("Invalid filter pattern")
    assert logs.describe_subscription_filters(logGroupName=group)["subscriptionFilters"] == []


def test_filters_survive_a_restart(fresh_server):
    fresh_server.start()
    group = f"/sub/{uid()}"
    logs = fresh_server.client("logs")
    logs.create_log_group(logGroupName=group)
    logs.put_subscription_filter(logGroupName=group, filterName="f", filterPattern="ERROR", destinationArn=FN)
    before = logs.describe_subscription_filters(logGroupName=group)["subscriptionFilters"]
    fresh_server.stop()
    fresh_server.start()
    after = fresh_server.client("logs").describe_subscription_filters(logGroupName=group)["subscriptionFilters"]
    assert after == before and len(after) == 1


TEMPLATE = """
Parameters:
  Pattern: {Type: String, Default: ERROR}
Resources:
  Group:
    Type: AWS::Logs::LogGroup
  Filter:
    Type: AWS::Logs::SubscriptionFilter
    Properties:
      LogGroupName: !Ref Group
      FilterPattern: !Ref Pattern
      DestinationArn: arn:aws:lambda:us-east-1:000000000000:function:sink
Outputs:
  Group: {Value: !Ref Group}
  Filter: {Value: !Ref Filter}
"""


def test_cloudformation_deploy_update_delete(cumulo, logs, tmp_path):
    stack = f"subscription-{uid()}"
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path))
    cfn = cumulo.client("cloudformation")
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    [f] = logs.describe_subscription_filters(logGroupName=out["Group"])["subscriptionFilters"]
    assert (f["filterName"], f["filterPattern"], f["destinationArn"]) == (out["Filter"], "ERROR", FN)

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path),
               "--parameter-overrides", "Pattern=WARN")
    [f] = logs.describe_subscription_filters(logGroupName=out["Group"])["subscriptionFilters"]
    assert (f["filterName"], f["filterPattern"]) == (out["Filter"], "WARN")

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)
    assert error(logs.describe_subscription_filters, logGroupName=out["Group"])[0] == "ResourceNotFoundException"


NODE_SINK = """
const zlib = require('zlib');
exports.handler = async (event) => {
  const data = JSON.parse(zlib.gunzipSync(Buffer.from(event.awslogs.data, 'base64')).toString());
  console.log('DELIVERED ' + JSON.stringify(data));
  return {};
};
"""


def test_lambda_destination_receives_matching_events(cumulo, logs, tmp_path):
    """PutLogEvents delivers the events a filter matches to its Lambda function, as AWS's
    base64(gzip(DATA_MESSAGE)) `awslogs` payload; unmatched events are not sent."""
    import io
    import json
    import time
    import zipfile

    lam = cumulo.client("lambda")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.js", NODE_SINK)
    fn = f"sink-{uid()}"
    arn = lam.create_function(FunctionName=fn, Runtime="nodejs20.x", Role=ROLE, Handler="index.handler",
                              Code={"ZipFile": buf.getvalue()})["FunctionArn"]
    lam.get_waiter("function_active_v2").wait(FunctionName=fn, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    group = f"/app/{uid()}"
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="s1")
    logs.put_subscription_filter(logGroupName=group, filterName="errors", filterPattern="ERROR",
                                 destinationArn=arn)
    now = int(time.time() * 1000)
    logs.put_log_events(logGroupName=group, logStreamName="s1", logEvents=[
        {"timestamp": now, "message": "all fine"},
        {"timestamp": now + 1, "message": "ERROR disk full"},
        {"timestamp": now + 2, "message": "ERROR again"},
    ])
    deadline = time.time() + 20
    delivered = []
    while not delivered and time.time() < deadline:
        time.sleep(0.2)
        try:
            streams = logs.describe_log_streams(logGroupName=f"/aws/lambda/{fn}")["logStreams"]
        except botocore.exceptions.ClientError:
            continue
        for s in streams:
            for e in logs.get_log_events(logGroupName=f"/aws/lambda/{fn}", logStreamName=s["logStreamName"],
                                         startFromHead=True)["events"]:
                if "DELIVERED " in e["message"]:
                    delivered.append(json.loads(e["message"].split("DELIVERED ", 1)[1]))
    assert len(delivered) == 1, delivered
    data = delivered[0]
    assert data["messageType"] == "DATA_MESSAGE" and data["owner"] == "000000000000"
    assert data["logGroup"] == group and data["logStream"] == "s1"
    assert data["subscriptionFilters"] == ["errors"]
    assert [e["message"] for e in data["logEvents"]] == ["ERROR disk full", "ERROR again"]
    assert [e["timestamp"] for e in data["logEvents"]] == [now + 1, now + 2]
    # The ids are FilterLogEvents' eventIds of the same events.
    ids = {e["eventId"] for e in logs.filter_log_events(logGroupName=group, filterPattern="ERROR")["events"]}
    assert {e["id"] for e in data["logEvents"]} == ids
