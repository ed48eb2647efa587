"""CloudWatch through boto3 (which picks awsJson1_0 from the model's protocol list), through raw
Smithy RPC v2 CBOR, JSON and query requests (serialized and parsed by botocore's own codecs for
each protocol), and the AWS CLI: metrics and their statistics, GetMetricData with metric math
and paging, alarms evaluated from the stored datapoints (metric, metric-math and composite),
history, dashboards, tags, errors with AWS's codes and messages, bad input changing nothing, and
restart survival."""

import datetime
import json
import urllib.error
import urllib.parse
import urllib.request
import uuid

import botocore.exceptions
import botocore.session
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.parsers import create_parser
from botocore.serialize import create_serializer

MODEL = botocore.session.get_session().get_service_model("cloudwatch")


def name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def error(excinfo):
    e = excinfo.value.response
    return e["Error"]["Code"], e["Error"].get("Message", ""), e["ResponseMetadata"]["HTTPStatusCode"]


@pytest.fixture(scope="module")
def cw(cumulo):
    return cumulo.client("cloudwatch")


def raw_call(cumulo, protocol, op, params, signed=True):
    """One call in `protocol`, built and read by botocore's serializer and parser for it, signed
    as the SDKs sign it (routed by signing name) or not (routed by the request's shape)."""
    om = MODEL.operation_model(op)
    req = create_serializer(protocol).serialize_to_request(params, om)
    body = req["body"]
    if isinstance(body, dict):
        body = urllib.parse.urlencode(body).encode()
    elif isinstance(body, str):
        body = body.encode()
    headers = dict(req["headers"])
    if protocol == "json":
        headers["X-Amz-Target"] = f"GraniteServiceVersion20100801.{op}"
        headers["Content-Type"] = "application/x-amz-json-1.0"
    url = cumulo.endpoint + req["url_path"]
    if signed:
        aws_req = AWSRequest(method="POST", url=url, data=body, headers=headers)
        SigV4Auth(Credentials("test", "test"), "monitoring", "us-east-1").add_auth(aws_req)
        headers = dict(aws_req.headers.items())
    http_req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(http_req, timeout=10) as r:
            status, rheaders, rbody = r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        status, rheaders, rbody = e.code, e.headers, e.read()
    parsed = create_parser(protocol).parse(
        {"status_code": status, "headers": {k.lower(): v for k, v in rheaders.items()}, "body": rbody},
        om.output_shape,
    )
    return status, rheaders.get("content-type"), parsed


def test_boto3_speaks_json_to_cloudwatch(cw):
    seen = {}
    cw.meta.events.register("before-send.cloudwatch.ListMetrics",
                            lambda request, **_: seen.update(request.headers))
    cw.list_metrics(Namespace="none")
    assert seen["X-Amz-Target"] == b"GraniteServiceVersion20100801.ListMetrics"


def test_metrics_statistics_and_listing(cw):
    ns = name("App")
    t = now().replace(second=5, microsecond=0)
    dims = [{"Name": "Service", "Value": "web"}, {"Name": "Env", "Value": "prod"}]
    cw.put_metric_data(Namespace=ns, MetricData=[
        {"MetricName": "Latency", "Dimensions": dims, "Value": 10, "Unit": "Milliseconds", "Timestamp": t},
        {"MetricName": "Latency", "Dimensions": list(reversed(dims)), "Values": [20, 30], "Counts": [1, 2],
         "Unit": "Milliseconds", "Timestamp": t},
        {"MetricName": "Latency", "Dimensions": dims, "Unit": "Milliseconds", "Timestamp": t,
         "StatisticValues": {"SampleCount": 2, "Sum": 4, "Minimum": 1, "Maximum": 3}},
        {"MetricName": "Errors", "Value": 1, "Timestamp": t, "StorageResolution": 1},
    ])
    stats = cw.get_metric_statistics(
        Namespace=ns, MetricName="Latency", Dimensions=dims, StartTime=t - datetime.timedelta(minutes=5),
        EndTime=t + datetime.timedelta(minutes=5), Period=60,
        Statistics=["SampleCount", "Sum", "Average", "Minimum", "Maximum"])
    [p] = stats["Datapoints"]
    assert stats["Label"] == "Latency"
    assert (p["SampleCount"], p["Sum"], p["Minimum"], p["Maximum"], p["Unit"]) == (6.0, 94.0, 1.0, 30.0, "Milliseconds")
    assert p["Average"] == pytest.approx(94 / 6)
    assert p["Timestamp"] == t.replace(second=0)
    ext = cw.get_metric_statistics(Namespace=ns, MetricName="Latency", Dimensions=dims, StartTime=t - datetime.timedelta(minutes=1),
                                   EndTime=t + datetime.timedelta(minutes=1), Period=60, ExtendedStatistics=["p50"])
    assert ext["Datapoints"][0]["ExtendedStatistics"] == {"p50": 20.0}  # of 10, 20, 30, 30
    # The unit filters; a different dimension set is a different metric.
    assert cw.get_metric_statistics(Namespace=ns, MetricName="Latency", Dimensions=dims, StartTime=t - datetime.timedelta(minutes=1),
                                    EndTime=t + datetime.timedelta(minutes=1), Period=60, Statistics=["Sum"],
                                    Unit="Seconds")["Datapoints"] == []
    assert cw.get_metric_statistics(Namespace=ns, MetricName="Latency", StartTime=t - datetime.timedelta(minutes=1),
                                    EndTime=t + datetime.timedelta(minutes=1), Period=60, Statistics=["Sum"])["Datapoints"] == []

    # Without a Unit, each unit of a period is its own datapoint.
    cw.put_metric_data(Namespace=ns, MetricData=[{"MetricName": "Mixed", "Value": v, "Unit": u, "Timestamp": t}
                                                  for v, u in ((10, "Count"), (1, "Seconds"))])
    mixed = cw.get_metric_statistics(Namespace=ns, MetricName="Mixed", StartTime=t - datetime.timedelta(minutes=1),
                                     EndTime=t + datetime.timedelta(minutes=1), Period=60, Statistics=["Average"])
    assert sorted((p["Unit"], p["Average"]) for p in mixed["Datapoints"]) == [("Count", 10.0), ("Seconds", 1.0)]
    listed = cw.list_metrics(Namespace=ns)["Metrics"]
    assert sorted(m["MetricName"] for m in listed) == ["Errors", "Latency", "Mixed"]
    lat = [m for m in listed if m["MetricName"] == "Latency"][0]
    assert sorted(d["Name"] for d in lat["Dimensions"]) == ["Env", "Service"]
    assert [m["MetricName"] for m in cw.list_metrics(Namespace=ns, Dimensions=[{"Name": "Service"}])["Metrics"]] == ["Latency"]
    assert cw.list_metrics(Namespace=ns, Dimensions=[{"Name": "Service", "Value": "db"}])["Metrics"] == []
    assert len(cw.list_metrics(Namespace=ns, RecentlyActive="PT3H")["Metrics"]) == 3


def test_get_metric_data_math_and_paging(cw):
    ns = name("Math")
    base = now().replace(second=0, microsecond=0) - datetime.timedelta(minutes=4)
    for i in range(4):
        ts = base + datetime.timedelta(minutes=i, seconds=10)
        cw.put_metric_data(Namespace=ns, MetricData=[
            {"MetricName": "a", "Value": i + 1, "Timestamp": ts},
            {"MetricName": "b", "Value": 10 * (i + 1), "Timestamp": ts},
        ])

    def stat(metric):
        return {"Metric": {"Namespace": ns, "MetricName": metric}, "Period": 60, "Stat": "Sum"}

    queries = [
        {"Id": "m1", "MetricStat": stat("a"), "ReturnData": False},
        {"Id": "m2", "MetricStat": stat("b"), "Label": "bees"},
        {"Id": "total", "Expression": "SUM(METRICS())", "Label": "total"},
        {"Id": "ratio", "Expression": "m2 / m1 + 1"},
    ]
    out = cw.get_metric_data(MetricDataQueries=queries, StartTime=base, EndTime=base + datetime.timedelta(minutes=4))
    res = {r["Id"]: r for r in out["MetricDataResults"]}
    assert set(res) == {"m2", "total", "ratio"}
    assert res["m2"]["Label"] == "bees" and res["m2"]["StatusCode"] == "Complete"
    assert res["m2"]["Values"] == [40.0, 30.0, 20.0, 10.0]  # newest first by default
    assert res["total"]["Values"] == [44.0, 33.0, 22.0, 11.0]
    assert res["ratio"]["Values"] == [11.0, 11.0, 11.0, 11.0]
    assert res["m2"]["Timestamps"][0] == base + datetime.timedelta(minutes=3)
    asc = cw.get_metric_data(MetricDataQueries=queries[:2], StartTime=base, EndTime=base + datetime.timedelta(minutes=4),
                             ScanBy="TimestampAscending")
    assert asc["MetricDataResults"][0]["Values"] == [10.0, 20.0, 30.0, 40.0]

    # Paging: three datapoints a page.
    values, token, pages = [], None, 0
    while True:
        kw = {"NextToken": token} if token else {}
        page = cw.get_metric_data(MetricDataQueries=queries[:3], StartTime=base,
                                  EndTime=base + datetime.timedelta(minutes=4), MaxDatapoints=3, **kw)
        pages += 1
        for r in page["MetricDataResults"]:
            values.append((r["Id"], r["Values"]))
        token = page.get("NextToken")
        if not token:
            break
    assert pages == 3
    flat = {}
    for i, v in values:
        flat.setdefault(i, []).extend(v)
    assert flat == {"m2": [40.0, 30.0, 20.0, 10.0], "total": [44.0, 33.0, 22.0, 11.0]}

    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.get_metric_data(MetricDataQueries=[{"Id": "x", "Expression": "nope * 2"}], StartTime=base, EndTime=base + datetime.timedelta(minutes=1))
    assert error(e)[0] == "ValidationError" and "nope" in error(e)[1]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.get_metric_data(MetricDataQueries=[{"Id": "Bad", "MetricStat": stat("a")}], StartTime=base, EndTime=base + datetime.timedelta(minutes=1))
    assert error(e)[0] == "InvalidParameterValue"


def test_put_metric_data_refusals_change_nothing(cw):
    ns = name("Bad")
    cases = [
        ([{"MetricName": "m", "Value": 1, "Values": [1]}], "InvalidParameterCombination",
         "The parameters MetricData.member.1.Value and MetricData.member.1.Values are mutually exclusive and you have specified both."),
        ([{"MetricName": "m", "Values": [1, 2], "Counts": [1]}], "InvalidParameterValue",
         "The parameters MetricData.member.1.Values and MetricData.member.1.Counts must be of the same size."),
        ([{"MetricName": "m", "Value": 1, "StatisticValues": {"SampleCount": 1, "Sum": 1, "Minimum": 1, "Maximum": 1}}],
         "InvalidParameterCombination",
         "The parameters MetricData.member.1.Value and MetricData.member.1.StatisticValues are mutually exclusive and you have specified both."),
        ([{"MetricName": "ok", "Value": 1}, {"MetricName": "m", "Value": 1, "Timestamp": now() + datetime.timedelta(hours=3)}],
         "InvalidParameterValue",
         "The parameter MetricData.member.2.Timestamp must specify a time no more than two hours in the future."),
    ]
    for data, code, message in cases:
        with pytest.raises(botocore.exceptions.ClientError) as e:
            cw.put_metric_data(Namespace=ns, MetricData=data)
        assert error(e) == (code, message, 400)
    assert cw.list_metrics(Namespace=ns)["Metrics"] == []
    # A day of minutes is the most one call may ask for.
    t = now()
    assert cw.get_metric_statistics(Namespace=ns, MetricName="m", StartTime=t - datetime.timedelta(days=1),
                                    EndTime=t, Period=60, Statistics=["Sum"])["Datapoints"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.get_metric_statistics(Namespace=ns, MetricName="m", StartTime=t - datetime.timedelta(days=2), EndTime=t,
                                 Period=60, Statistics=["Sum"])
    assert error(e) == ("InvalidParameterCombination",
                        "You have requested up to 2880 datapoints, which exceeds the limit of 1440. You may reduce the datapoints requested by increasing Period, or decreasing the time range.", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.get_metric_statistics(Namespace=ns, MetricName="m", StartTime=now(), EndTime=now() - datetime.timedelta(hours=1),
                                 Period=60, Statistics=["Sum"])
    assert error(e) == ("InvalidParameterValue", "The parameter StartTime must be less than the parameter EndTime.", 400)


def alarm(cw, alarm_name, ns, **kw):
    args = dict(AlarmName=alarm_name, Namespace=ns, MetricName="cpu", Statistic="Maximum", Period=60,
                EvaluationPeriods=1, Threshold=50, ComparisonOperator="GreaterThanThreshold")
    args.update(kw)
    cw.put_metric_alarm(**args)


def describe(cw, alarm_name, kind="MetricAlarms"):
    types = ["CompositeAlarm"] if kind == "CompositeAlarms" else ["MetricAlarm"]
    return cw.describe_alarms(AlarmNames=[alarm_name], AlarmTypes=types)[kind][0]


def test_alarms_evaluate_from_datapoints_and_composites_follow(cw, cumulo):
    ns = name("Alarms")
    high, low, both = name("high"), name("low"), name("both")
    alarm(cw, high, ns, AlarmActions=["arn:aws:sns:us-east-1:000000000000:t"], Tags=[{"Key": "team", "Value": "a"}])
    alarm(cw, low, ns, MetricName="mem", ComparisonOperator="LessThanThreshold", Threshold=10,
          TreatMissingData="notBreaching")
    a = describe(cw, high)
    assert (a["StateValue"], a["StateReason"]) == ("INSUFFICIENT_DATA", "Unchecked: Initial alarm creation")
    assert a["AlarmArn"] == f"arn:aws:cloudwatch:us-east-1:000000000000:alarm:{high}"
    assert a["Dimensions"] == [] and a["ActionsEnabled"] is True and a["OKActions"] == []
    cw.put_composite_alarm(AlarmName=both, AlarmRule=f'ALARM("{high}") OR ALARM({low})')
    assert describe(cw, both, "CompositeAlarms")["StateValue"] == "OK"
    # Missing data treated as not breaching: OK at once.
    assert describe(cw, low)["StateValue"] == "OK"

    cw.put_metric_data(Namespace=ns, MetricData=[{"MetricName": "cpu", "Value": 90}])
    a = describe(cw, high)
    assert a["StateValue"] == "ALARM"
    # One period evaluated: AWS's plain form (aws-recordings/cloudwatch test_put_metric_alarm).
    assert a["StateReason"].startswith("Threshold Crossed: 1 datapoint [90.0 ("), a["StateReason"]
    assert a["StateReason"].endswith(")] was greater than the threshold (50.0)."), a["StateReason"]
    assert json.loads(a["StateReasonData"])["recentDatapoints"] == [90.0]
    c = describe(cw, both, "CompositeAlarms")
    assert c["StateValue"] == "ALARM"
    assert json.loads(c["StateReasonData"])["triggeringAlarms"][0]["arn"].endswith(f":alarm:{high}")

    hist = cw.describe_alarm_history(AlarmName=high, HistoryItemType="StateUpdate")["AlarmHistoryItems"]
    assert [h["HistorySummary"] for h in hist] == ["Alarm updated from INSUFFICIENT_DATA to ALARM"]
    assert json.loads(hist[0]["HistoryData"])["newState"]["stateValue"] == "ALARM"
    created = cw.describe_alarm_history(AlarmName=high, HistoryItemType="ConfigurationUpdate")["AlarmHistoryItems"]
    assert created[0]["HistorySummary"] == f'Alarm "{high}" created'

    # SetAlarmState holds until the next evaluation; the composite follows its child.
    cw.set_alarm_state(AlarmName=high, StateValue="OK", StateReason="testing")
    a = describe(cw, high)
    assert (a["StateValue"], a["StateReason"]) == ("OK", "testing")
    assert describe(cw, both, "CompositeAlarms")["StateValue"] == "OK"

    # Filters.
    assert [x["AlarmName"] for x in cw.describe_alarms(ChildrenOfAlarmName=both)["MetricAlarms"]] == sorted([high, low])
    assert [x["AlarmName"] for x in cw.describe_alarms(ParentsOfAlarmName=high)["CompositeAlarms"]] == [both]
    assert cw.describe_alarms(AlarmNames=[both])["CompositeAlarms"] == []  # MetricAlarm only by default
    assert [x["AlarmName"] for x in cw.describe_alarms(AlarmNamePrefix=high, StateValue="OK")["MetricAlarms"]] == [high]
    assert [x["AlarmName"] for x in cw.describe_alarms(ActionPrefix="arn:aws:sns:us-east-1:000000000000:t")["MetricAlarms"]] == [high]
    # A rule may name its children by ARN; SetAlarmState on a composite holds as on a metric alarm.
    by_arn = name("byarn")
    cw.put_composite_alarm(AlarmName=by_arn, AlarmRule=f'NOT OK("{describe(cw, low)["AlarmArn"]}")')
    assert [x["AlarmName"] for x in cw.describe_alarms(ChildrenOfAlarmName=by_arn)["MetricAlarms"]] == [low]
    assert describe(cw, by_arn, "CompositeAlarms")["StateValue"] == "OK"
    cw.set_alarm_state(AlarmName=by_arn, StateValue="ALARM", StateReason="by hand")
    assert describe(cw, by_arn, "CompositeAlarms")["StateReason"] == "by hand"
    cw.delete_alarms(AlarmNames=[by_arn])
    [m] = cw.describe_alarms_for_metric(Namespace=ns, MetricName="cpu")["MetricAlarms"]
    assert m["AlarmName"] == high
    cw.disable_alarm_actions(AlarmNames=[high])
    assert describe(cw, high)["ActionsEnabled"] is False
    cw.enable_alarm_actions(AlarmNames=[high])
    assert describe(cw, high)["ActionsEnabled"] is True

    # Tags.
    arn = describe(cw, high)["AlarmArn"]
    cw.tag_resource(ResourceARN=arn, Tags=[{"Key": "env", "Value": "prod"}])
    cw.untag_resource(ResourceARN=arn, TagKeys=["team"])
    assert cw.list_tags_for_resource(ResourceARN=arn)["Tags"] == [{"Key": "env", "Value": "prod"}]

    # Paging.
    names, token = [], None
    while True:
        page = cw.describe_alarms(AlarmNames=[high, low, both], AlarmTypes=["MetricAlarm", "CompositeAlarm"], MaxRecords=1,
                                  **({"NextToken": token} if token else {}))
        names += [x["AlarmName"] for x in page["MetricAlarms"] + page["CompositeAlarms"]]
        token = page.get("NextToken")
        if not token:
            break
    assert sorted(names) == sorted([high, low, both])

    cw.delete_alarms(AlarmNames=[both, high, low])
    assert cw.describe_alarms(AlarmNamePrefix=high)["MetricAlarms"] == []
    deleted = cw.describe_alarm_history(AlarmName=high, HistoryItemType="ConfigurationUpdate")["AlarmHistoryItems"]
    assert deleted[0]["HistorySummary"] == f'Alarm "{high}" deleted'


def test_metric_math_alarm(cw):
    ns = name("MathAlarm")
    n = name("ratio")
    metrics = [
        {"Id": "errors", "MetricStat": {"Metric": {"Namespace": ns, "MetricName": "errors"}, "Period": 60, "Stat": "Sum"},
         "ReturnData": False},
        {"Id": "requests", "MetricStat": {"Metric": {"Namespace": ns, "MetricName": "requests"}, "Period": 60, "Stat": "Sum"},
         "ReturnData": False},
        {"Id": "rate", "Expression": "100 * errors / requests", "Label": "error rate", "ReturnData": True},
    ]
    cw.put_metric_alarm(AlarmName=n, Metrics=metrics, EvaluationPeriods=1, Threshold=5,
                        ComparisonOperator="GreaterThanOrEqualToThreshold")
    cw.put_metric_data(Namespace=ns, MetricData=[{"MetricName": "requests", "Value": 100}, {"MetricName": "errors", "Value": 2}])
    assert describe(cw, n)["StateValue"] == "OK"
    cw.put_metric_data(Namespace=ns, MetricData=[{"MetricName": "errors", "Value": 8}])
    a = describe(cw, n)
    assert a["StateValue"] == "ALARM" and a["Metrics"][2]["Expression"] == "100 * errors / requests"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.put_metric_alarm(AlarmName=name("two"), Metrics=[dict(m, ReturnData=True) for m in metrics], EvaluationPeriods=1,
                            Threshold=5, ComparisonOperator="GreaterThanThreshold")
    assert error(e)[0] == "ValidationError"
    cw.delete_alarms(AlarmNames=[n])


def test_alarm_errors_change_nothing(cw):
    ns = name("Err")
    n = name("a")
    alarm(cw, n, ns)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.set_alarm_state(AlarmName=n, StateValue="INVALID", StateReason="x")
    assert error(e) == ("ValidationError", "1 validation error detected: Value 'INVALID' at 'stateValue' failed to satisfy constraint: Member must satisfy enum value set: [INSUFFICIENT_DATA, ALARM, OK]", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.set_alarm_state(AlarmName=name("missing"), StateValue="OK", StateReason="x")
    assert error(e) == ("ResourceNotFound", "", 404)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.put_composite_alarm(AlarmName=name("c"), AlarmRule=f'ALARM("{n}") AND ALARM("ghost")')
    assert error(e)[0] == "ValidationError" and "ghost" in error(e)[1]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.put_composite_alarm(AlarmName=name("c"), AlarmRule=f'ALARM("{n}") AND')
    assert error(e)[0] == "ValidationError"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        alarm(cw, n, ns, ComparisonOperator="Bigger", Threshold=1)
    assert error(e)[0] == "ValidationError"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        alarm(cw, n, ns, Period=45, Threshold=1)
    assert error(e)[0] == "InvalidParameterValue"
    a = describe(cw, n)
    assert (a["Threshold"], a["ComparisonOperator"], a["Period"]) == (50.0, "GreaterThanThreshold", 60)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.delete_alarms(AlarmNames=[n, name("ghost")])
    assert error(e)[0] == "ResourceNotFound"
    assert describe(cw, n)["AlarmName"] == n
    # An alarm ARN naming no alarm has no tags, as AWS answers for a deleted one (aws-recordings).
    assert cw.list_tags_for_resource(ResourceARN="arn:aws:cloudwatch:us-east-1:000000000000:alarm:ghost")["Tags"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.tag_resource(ResourceARN="arn:aws:cloudwatch:us-east-1:000000000000:alarm:ghost", Tags=[{"Key": "k", "Value": "v"}])
    assert error(e)[:1] == ("ResourceNotFoundException",)
    cw.delete_alarms(AlarmNames=[n])


def test_dashboards(cw):
    d = name("dash")
    body = json.dumps({"widgets": [{"type": "text", "x": 0, "y": 0, "width": 6, "height": 3, "properties": {"markdown": "hi"}}]})
    assert cw.put_dashboard(DashboardName=d, DashboardBody=body)["DashboardValidationMessages"] == []
    got = cw.get_dashboard(DashboardName=d)
    assert (got["DashboardBody"], got["DashboardArn"]) == (body, f"arn:aws:cloudwatch::000000000000:dashboard/{d}")
    [entry] = cw.list_dashboards(DashboardNamePrefix=d)["DashboardEntries"]
    assert entry["Size"] == len(body)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.put_dashboard(DashboardName="bad name!", DashboardBody=body)
    assert error(e) == ("InvalidParameterValue", "The value for field DashboardName contains invalid characters. It can only contain alphanumerics, dash (-) and underscore (_).\n", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.put_dashboard(DashboardName=d, DashboardBody="{not json")
    assert error(e) == ("InvalidParameterInput", "The field DashboardBody must be a valid JSON object", 400)
    assert cw.get_dashboard(DashboardName=d)["DashboardBody"] == body
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.delete_dashboards(DashboardNames=[d, "ghost-dash"])
    assert error(e)[:1] == ("ResourceNotFound",)
    cw.delete_dashboards(DashboardNames=[d])
    assert cw.list_dashboards(DashboardNamePrefix=d)["DashboardEntries"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cw.get_dashboard(DashboardName=d)
    assert error(e) == ("ResourceNotFound", f"Dashboard {d} does not exist", 404)


@pytest.mark.parametrize("protocol", ["smithy-rpc-v2-cbor", "json", "query"])
def test_each_protocol_raw(cumulo, protocol):
    ns = name("Raw")
    t = now().replace(microsecond=0)
    status, ctype, _ = raw_call(cumulo, protocol, "PutMetricData", {
        "Namespace": ns, "MetricData": [{"MetricName": "m", "Value": 7.5, "Timestamp": t,
                                         "Dimensions": [{"Name": "k", "Value": "v"}]}]})
    assert status == 200
    expected_type = {"smithy-rpc-v2-cbor": "application/cbor", "json": "application/x-amz-json-1.0", "query": "text/xml"}
    assert ctype == expected_type[protocol]
    status, _, out = raw_call(cumulo, protocol, "GetMetricData", {
        "MetricDataQueries": [{"Id": "q", "MetricStat": {"Metric": {"Namespace": ns, "MetricName": "m",
                                                                   "Dimensions": [{"Name": "k", "Value": "v"}]},
                                                        "Period": 60, "Stat": "Average"}},
                              {"Id": "e", "Expression": "q * 2"}],
        "StartTime": t - datetime.timedelta(minutes=2), "EndTime": t + datetime.timedelta(minutes=2)})
    assert status == 200
    res = {r["Id"]: r for r in out["MetricDataResults"]}
    assert res["q"]["Values"] == [7.5] and res["e"]["Values"] == [15.0]
    assert res["q"]["Timestamps"][0] == t.replace(second=0)
    alarm_name = name("raw")
    status, _, _ = raw_call(cumulo, protocol, "PutMetricAlarm", {
        "AlarmName": alarm_name, "Namespace": ns, "MetricName": "m", "Statistic": "Average", "Period": 60,
        "EvaluationPeriods": 1, "Threshold": 5.0, "ComparisonOperator": "GreaterThanThreshold",
        "Dimensions": [{"Name": "k", "Value": "v"}]})
    assert status == 200
    status, _, out = raw_call(cumulo, protocol, "DescribeAlarms", {"AlarmNames": [alarm_name]})
    [a] = out["MetricAlarms"]
    assert a["StateValue"] == "ALARM" and a["Threshold"] == 5.0
    assert isinstance(a["StateUpdatedTimestamp"], datetime.datetime)
    status, _, out = raw_call(cumulo, protocol, "SetAlarmState", {"AlarmName": alarm_name, "StateValue": "INVALID", "StateReason": "x"})
    assert (status, out["Error"]["Code"]) == (400, "ValidationError")
    assert out["Error"]["Message"].startswith("1 validation error detected: Value 'INVALID' at 'stateValue'")
    status, _, out = raw_call(cumulo, protocol, "SetAlarmState", {"AlarmName": name("ghost"), "StateValue": "OK", "StateReason": "x"})
    assert (status, out["Error"]["Code"]) == (404, "ResourceNotFound")
    status, _, out = raw_call(cumulo, protocol, "PutMetricData", {
        "Namespace": ns, "MetricData": [{"MetricName": "m", "Value": 1, "Values": [1.0]}]})
    assert (status, out["Error"]["Code"]) == (400, "InvalidParameterCombination")
    status, _, out = raw_call(cumulo, protocol, "PutAnomalyDetector", {"Namespace": ns, "MetricName": "m", "Stat": "Average"})
    assert status == 501 and "PutAnomalyDetector" in out["Error"]["Message"]
    # Unsigned, the request's shape routes it: the CBOR path, the JSON target, the query Version.
    status, _, out = raw_call(cumulo, protocol, "DescribeAlarms", {"AlarmNames": [alarm_name]}, signed=False)
    assert status == 200 and out["MetricAlarms"][0]["AlarmName"] == alarm_name
    raw_call(cumulo, protocol, "DeleteAlarms", {"AlarmNames": [alarm_name]})
    assert raw_call(cumulo, protocol, "DescribeAlarms", {"AlarmNames": [alarm_name]})[2]["MetricAlarms"] == []


def test_json_errors_carry_the_query_code(cumulo):
    """awsQueryCompatible: the JSON error names the shape and `x-amzn-query-error` the code."""
    req = urllib.request.Request(cumulo.endpoint + "/", method="POST", data=json.dumps(
        {"Namespace": "x", "MetricData": [{"MetricName": "m", "Value": 1, "Values": [1]}]}).encode(),
        headers={"X-Amz-Target": "GraniteServiceVersion20100801.PutMetricData",
                 "Content-Type": "application/x-amz-json-1.0"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    # Qualified by CloudWatch's namespace, as AWS sends it (aws-recordings/cloudwatch).
    assert json.loads(e.value.read())["__type"] == "com.amazonaws.cloudwatch.v2010_08_01#InvalidParameterCombinationException"
    assert e.value.headers["x-amzn-query-error"] == "InvalidParameterCombination;Sender"


def test_cli(cumulo):
    ns = name("Cli")
    cumulo.aws("cloudwatch", "put-metric-data", "--namespace", ns, "--metric-name", "hits", "--value", "3",
               "--dimensions", "Page=home", "--unit", "Count")
    cumulo.aws("cloudwatch", "put-metric-alarm", "--alarm-name", f"{ns}-alarm", "--namespace", ns,
               "--metric-name", "hits", "--dimensions", "Name=Page,Value=home", "--statistic", "Sum",
               "--period", "60", "--evaluation-periods", "1", "--threshold", "1",
               "--comparison-operator", "GreaterThanThreshold")
    out = cumulo.aws("cloudwatch", "describe-alarms", "--alarm-names", f"{ns}-alarm")
    assert out["MetricAlarms"][0]["StateValue"] == "ALARM"
    listed = cumulo.aws("cloudwatch", "list-metrics", "--namespace", ns)
    assert listed["Metrics"] == [{"Namespace": ns, "MetricName": "hits", "Dimensions": [{"Name": "Page", "Value": "home"}]}]
    bad = cumulo.aws("cloudwatch", "set-alarm-state", "--alarm-name", "ghost", "--state-value", "OK",
                     "--state-reason", "x", check=False)
    assert bad.returncode != 0 and "ResourceNotFound" in bad.stderr
    cumulo.aws("cloudwatch", "delete-alarms", "--alarm-names", f"{ns}-alarm")


def test_state_survives_restart(fresh_server):
    fresh_server.start()
    cw = fresh_server.client("cloudwatch")
    cw.put_metric_data(Namespace="Kept", MetricData=[{"MetricName": "m", "Value": 99}])
    alarm(cw, "kept", "Kept", MetricName="m", Tags=[{"Key": "k", "Value": "v"}])
    cw.put_dashboard(DashboardName="kept", DashboardBody='{"widgets": []}')
    assert describe(cw, "kept")["StateValue"] == "ALARM"
    fresh_server.kill9()
    fresh_server.start()
    cw = fresh_server.client("cloudwatch")
    assert describe(cw, "kept")["StateValue"] == "ALARM"
    assert cw.list_metrics(Namespace="Kept")["Metrics"][0]["MetricName"] == "m"
    assert cw.list_tags_for_resource(ResourceARN=describe(cw, "kept")["AlarmArn"])["Tags"] == [{"Key": "k", "Value": "v"}]
    assert cw.get_dashboard(DashboardName="kept")["DashboardBody"] == '{"widgets": []}'
    hist = cw.describe_alarm_history(AlarmName="kept")["AlarmHistoryItems"]
    assert [h["HistoryItemType"] for h in hist] == ["StateUpdate", "ConfigurationUpdate"]
