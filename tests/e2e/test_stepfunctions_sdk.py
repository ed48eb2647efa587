"""Step Functions `arn:aws:states:::aws-sdk:<service>:<action>` Tasks against the emulated
services (JSON, query, rest-json and rest-xml protocols), each result compared with the same
call made through boto3, and SDK errors caught by a Catch under AWS's documented
`<ServiceName>.<ErrorName>Exception` names."""

import datetime
import io
import json
import time
import urllib.parse
import uuid
import zipfile

import pytest

ROLE = "arn:aws:iam::000000000000:role/sfn-role"


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def sfn(cumulo):
    return cumulo.client("stepfunctions")


def run_task(sfn, resource, parameters, catch=False):
    """Runs one Task with these parameters; its output, or the execution's error/cause."""
    task = {"Type": "Task", "Resource": f"arn:aws:states:::aws-sdk:{resource}",
            "Parameters": parameters, "End": True}
    if catch:
        task["Catch"] = [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}]
    states = {"Call": task, "Caught": {"Type": "Pass", "End": True}}
    arn = sfn.create_state_machine(name=f"sdk-{uid()}", roleArn=ROLE, definition=json.dumps(
        {"StartAt": "Call", "States": states}))["stateMachineArn"]
    ex = sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"]
    deadline = time.time() + 30
    while time.time() < deadline:
        d = sfn.describe_execution(executionArn=ex)
        if d["status"] != "RUNNING":
            break
        time.sleep(0.05)
    if d["status"] == "SUCCEEDED":
        return json.loads(d["output"])
    return {"status": d["status"], "error": d.get("error"), "cause": d.get("cause")}


def test_json_services_answer_as_through_the_sdk(sfn, cumulo):
    ssm = cumulo.client("ssm")
    name = f"/sdk/{uid()}"
    ssm.put_parameter(Name=name, Value="v1", Type="String")
    out = run_task(sfn, "ssm:getParameter", {"Name": name})
    want = ssm.get_parameter(Name=name)["Parameter"]
    assert out["Parameter"]["Name"] == want["Name"] == name
    assert out["Parameter"]["Value"] == "v1"
    assert out["Parameter"]["Type"] == "String"
    assert out["Parameter"]["ARN"] == want["ARN"]

    sm = cumulo.client("secretsmanager")
    secret = f"sdk-{uid()}"
    sm.create_secret(Name=secret, SecretString="s3cret")
    out = run_task(sfn, "secretsmanager:getSecretValue", {"SecretId": secret})
    assert out["SecretString"] == "s3cret"
    assert out["Name"] == secret
    assert out["ARN"] == sm.describe_secret(SecretId=secret)["ARN"]


def test_camel_case_apis_are_recased_but_user_keys_kept(sfn, cumulo):
    ecs = cumulo.client("ecs")
    cluster = ecs.create_cluster(clusterName=f"sdk-{uid()}")["cluster"]["clusterArn"]
    out = run_task(sfn, "ecs:listClusters", {})
    assert cluster in out["ClusterArns"]
    assert set(out) <= {"ClusterArns", "NextToken"}

    logs = cumulo.client("logs")
    group = f"/sdk/{uid()}"
    out = run_task(sfn, "cloudwatchlogs:createLogGroup",
                   {"LogGroupName": group, "Tags": {"lowerKey": "v", "Upper": "w"}})
    assert out == {}
    assert logs.list_tags_log_group(logGroupName=group)["tags"] == {"lowerKey": "v", "Upper": "w"}
    out = run_task(sfn, "cloudwatchlogs:describeLogGroups", {"LogGroupNamePrefix": group})
    assert [g["LogGroupName"] for g in out["LogGroups"]] == [group]


def test_query_services_are_reached_in_their_form_protocol(sfn, cumulo):
    sns = cumulo.client("sns")
    name = f"sdk-{uid()}"
    out = run_task(sfn, "sns:createTopic", {"Name": name, "Tags": [{"Key": "k", "Value": "v"}]})
    arn = out["TopicArn"]
    assert arn.endswith(f":{name}")
    assert arn in [t["TopicArn"] for t in sns.list_topics()["Topics"]]
    assert sns.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "k", "Value": "v"}]
    out = run_task(sfn, "sns:listTopics", {})
    assert {"TopicArn": arn} in out["Topics"]

    iam = cumulo.client("iam")
    role = f"sdk-{uid()}"
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {
        "Service": "states.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
    iam.create_role(RoleName=role, AssumeRolePolicyDocument=trust)
    out = run_task(sfn, "iam:getRole", {"RoleName": role})
    assert out["Role"]["RoleName"] == role
    assert out["Role"]["Arn"] == iam.get_role(RoleName=role)["Role"]["Arn"]


def test_sdk_errors_are_named_and_catchable(sfn):
    out = run_task(sfn, "secretsmanager:getSecretValue", {"SecretId": f"missing-{uid()}"},
                   catch=True)
    assert out["Error"] == "SecretsManager.ResourceNotFoundException"
    assert "Service: SecretsManager, Status Code: 400" in out["Cause"]

    out = run_task(sfn, "iam:getRole", {"RoleName": f"missing-{uid()}"}, catch=True)
    assert out["Error"] == "Iam.NoSuchEntityException"
    assert "Service: Iam, Status Code: 404" in out["Cause"]

    out = run_task(sfn, "iam:getRole", {"RoleName": f"missing-{uid()}"})
    assert out["status"] == "FAILED"
    assert out["error"] == "Iam.NoSuchEntityException"


def test_rest_json_services_follow_the_models_http_bindings(sfn, cumulo):
    lam = cumulo.client("lambda")
    fn = f"sdk-fn-{uid()}"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("app.py", "def handler(event, context):\n    return event\n")
    lam.create_function(FunctionName=fn, Runtime="python3.11", Handler="app.handler",
                        Role="arn:aws:iam::000000000000:role/lambda-role",
                        Code={"ZipFile": buf.getvalue()}, Tags={"team": "a"})
    want = lam.get_function(FunctionName=fn)
    out = run_task(sfn, "lambda:getFunction", {"FunctionName": fn})
    assert out["Configuration"]["FunctionArn"] == want["Configuration"]["FunctionArn"]
    assert out["Configuration"]["Handler"] == "app.handler"
    assert out["Tags"] == {"team": "a"}
    out = run_task(sfn, "lambda:listTags", {"Resource": want["Configuration"]["FunctionArn"]})
    assert out == {"Tags": {"team": "a"}}

    out = run_task(sfn, "lambda:getFunction", {"FunctionName": f"missing-{uid()}"}, catch=True)
    assert out["Error"] == "Lambda.ResourceNotFoundException"
    assert "Service: Lambda, Status Code: 404" in out["Cause"]

    efs = cumulo.client("efs")
    token = uid()
    fs = efs.create_file_system(CreationToken=token)["FileSystemId"]
    out = run_task(sfn, "efs:describeFileSystems", {"CreationToken": token})
    assert [f["FileSystemId"] for f in out["FileSystems"]] == [fs]


def test_s3_objects_through_the_model(sfn, cumulo):
    s3 = cumulo.client("s3")
    bucket = f"sdk-{uid()}"
    assert run_task(sfn, "s3:createBucket", {"Bucket": bucket})["Location"] == f"/{bucket}"
    s3.head_bucket(Bucket=bucket)

    # A JSON value given as Body is stored as its JSON text, as text/plain (AWS's recording).
    put = run_task(sfn, "s3:putObject", {"Bucket": bucket, "Key": "a.json", "Body": {"Dict": "Value"}})
    head = s3.head_object(Bucket=bucket, Key="a.json")
    assert put["ETag"] == head["ETag"]
    assert head["ContentType"] == "text/plain; charset=UTF-8"
    assert s3.get_object(Bucket=bucket, Key="a.json")["Body"].read() == b'{"Dict":"Value"}'

    got = run_task(sfn, "s3:getObject", {"Bucket": bucket, "Key": "a.json"})
    assert got["Body"] == '{"Dict":"Value"}'
    assert got["ContentLength"] == 16 == head["ContentLength"]
    assert got["ETag"] == head["ETag"]
    assert got["ContentType"] == head["ContentType"]
    assert got["Metadata"] == {} == head["Metadata"]
    assert got["LastModified"] == head["LastModified"].strftime("%Y-%m-%dT%H:%M:%SZ")

    s3.put_object(Bucket=bucket, Key="dir/b.txt", Body=b"text data", Metadata={"color": "red"})
    out = run_task(sfn, "s3:headObject", {"Bucket": bucket, "Key": "dir/b.txt"})
    want = s3.head_object(Bucket=bucket, Key="dir/b.txt")
    assert out["Metadata"] == want["Metadata"] == {"color": "red"}
    assert (out["ContentLength"], out["ETag"]) == (want["ContentLength"], want["ETag"])
    assert "Body" not in out

    copied = run_task(sfn, "s3:copyObject", {"Bucket": bucket, "Key": "c.txt",
                                             "CopySource": f"{bucket}/dir/b.txt"})
    assert copied["CopyObjectResult"]["ETag"] == s3.head_object(Bucket=bucket, Key="c.txt")["ETag"]

    listed = run_task(sfn, "s3:listObjectsV2", {"Bucket": bucket})
    want = s3.list_objects_v2(Bucket=bucket)
    assert [o["Key"] for o in listed["Contents"]] == [o["Key"] for o in want["Contents"]]
    assert [o["Size"] for o in listed["Contents"]] == [o["Size"] for o in want["Contents"]]
    assert (listed["KeyCount"], listed["IsTruncated"]) == (want["KeyCount"], False)
    v1 = run_task(sfn, "s3:listObjects", {"Bucket": bucket, "Prefix": "dir/"})
    assert [o["Key"] for o in v1["Contents"]] == ["dir/b.txt"]

    tags = [{"Key": "team", "Value": "a"}]
    assert run_task(sfn, "s3:putBucketTagging", {"Bucket": bucket, "Tagging": {"TagSet": tags}}) == {}
    assert s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == tags
    assert run_task(sfn, "s3:getBucketTagging", {"Bucket": bucket}) == {"TagSet": tags}
    s3.put_object_tagging(Bucket=bucket, Key="c.txt", Tagging={"TagSet": tags})
    assert run_task(sfn, "s3:getObjectTagging", {"Bucket": bucket, "Key": "c.txt"})["TagSet"] == tags

    out = run_task(sfn, "s3:deleteObjects", {"Bucket": bucket, "Delete": {"Objects": [
        {"Key": "a.json"}, {"Key": "c.txt"}]}})
    assert sorted(d["Key"] for d in out["Deleted"]) == ["a.json", "c.txt"]
    run_task(sfn, "s3:deleteObject", {"Bucket": bucket, "Key": "dir/b.txt"})
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0

    out = run_task(sfn, "s3:listBuckets", {"Prefix": bucket})
    want = s3.list_buckets(Prefix=bucket)["Buckets"]
    assert [b["Name"] for b in out["Buckets"]] == [b["Name"] for b in want] == [bucket]
    assert out["Buckets"][0]["BucketRegion"] == want[0]["BucketRegion"]

    assert run_task(sfn, "s3:deleteBucket", {"Bucket": bucket}) == {}
    assert bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_s3_errors_carry_aws_names(sfn, cumulo):
    s3 = cumulo.client("s3")
    bucket = f"sdk-{uid()}"
    s3.create_bucket(Bucket=bucket)
    # AWS's recorded answer: S3.NoSuchKeyException, caught by a Catch.
    out = run_task(sfn, "s3:getObject", {"Bucket": bucket, "Key": "no_such_key.json"}, catch=True)
    assert out["Error"] == "S3.NoSuchKeyException"
    assert out["Cause"].startswith(
        "The specified key does not exist. (Service: S3, Status Code: 404, Request ID: ")
    assert "Extended Request ID: " in out["Cause"]
    # A HEAD has no body: the SDK names its 404 itself.
    out = run_task(sfn, "s3:headObject", {"Bucket": bucket, "Key": "nope"}, catch=True)
    assert out["Error"] == "S3.NoSuchKeyException"
    out = run_task(sfn, "s3:listObjects", {"Bucket": f"missing-{uid()}"}, catch=True)
    assert out["Error"] == "S3.NoSuchBucketException"
    assert out["Cause"].startswith("The specified bucket does not exist (Service: S3, Status Code: 404")

    # A result over Step Functions' 256 KiB quota fails the Task; States.ALL catches it, as
    # AWS's recorded executions show (its documentation says otherwise).
    s3.put_object(Bucket=bucket, Key="big.txt", Body=b"x" * 300_000)
    out = run_task(sfn, "s3:getObject", {"Bucket": bucket, "Key": "big.txt"})
    assert (out["status"], out["error"]) == ("FAILED", "States.DataLimitExceeded")
    out = run_task(sfn, "s3:getObject", {"Bucket": bucket, "Key": "big.txt"}, catch=True)
    assert out["Error"] == "States.DataLimitExceeded"
    assert out["Cause"].startswith("The state/task 'aws-sdk:s3' returned a result with a size")
    # A parameter the operation does not take fails it by name.
    out = run_task(sfn, "s3:getObject", {"Bucket": bucket, "Key": "k", "Nope": 1})
    assert (out["status"], out["error"]) == ("FAILED", "States.Runtime")
    assert "GetObject has no parameter Nope" in out["cause"]


def test_route53_zones_and_records(sfn, cumulo):
    r53 = cumulo.client("route53")
    name = f"sfn-{uid()}.example.com"
    created = run_task(sfn, "route53:createHostedZone", {"Name": name, "CallerReference": uid()})
    zone = created["HostedZone"]["Id"]
    # The Java SDK Step Functions calls through strips Route 53's path prefixes from ids.
    assert not zone.startswith("/")
    want = r53.get_hosted_zone(Id=zone)["HostedZone"]
    assert want["Id"] == f"/hostedzone/{zone}"
    assert created["HostedZone"]["Name"] == want["Name"] == f"{name}."
    assert created["HostedZone"]["ResourceRecordSetCount"] == want["ResourceRecordSetCount"]
    assert created["HostedZone"]["Config"]["PrivateZone"] is False

    record = {"Name": f"www.{name}.", "Type": "A", "TTL": 300,
              "ResourceRecords": [{"Value": "192.0.2.1"}]}
    changed = run_task(sfn, "route53:changeResourceRecordSets", {
        "HostedZoneId": zone,
        "ChangeBatch": {"Changes": [{"Action": "CREATE", "ResourceRecordSet": record}]}})
    assert changed["ChangeInfo"]["Status"] in ("PENDING", "INSYNC")
    assert not changed["ChangeInfo"]["Id"].startswith("/")

    listed = run_task(sfn, "route53:listResourceRecordSets", {"HostedZoneId": zone})
    want = r53.list_resource_record_sets(HostedZoneId=zone)
    assert listed["ResourceRecordSets"] == want["ResourceRecordSets"]
    assert record in listed["ResourceRecordSets"]
    assert listed["IsTruncated"] is False

    zones = run_task(sfn, "route53:listHostedZones", {})["HostedZones"]
    assert zone in [z["Id"] for z in zones]

    out = run_task(sfn, "route53:getHostedZone", {"Id": "ZNOSUCHZONE"}, catch=True)
    assert out["Error"] == "Route53.NoSuchHostedZoneException"
    assert "(Service: Route53, Status Code: 404" in out["Cause"]


def test_cloudfront_distributions(sfn, cumulo):
    cf = cumulo.client("cloudfront")
    config = {
        "CallerReference": uid(), "Comment": "sfn", "Enabled": True,
        "Origins": {"Quantity": 1, "Items": [{
            "Id": "web", "DomainName": "origin.example.com",
            "CustomOriginConfig": {"HTTPPort": 80, "HTTPSPort": 443,
                                   "OriginProtocolPolicy": "https-only"}}]},
        "DefaultCacheBehavior": {"TargetOriginId": "web", "ViewerProtocolPolicy": "allow-all",
                                 "CachePolicyId": "658327ea-f89d-4fab-a63d-7e88639e58f6"},
    }
    did = cf.create_distribution(DistributionConfig=config)["Distribution"]["Id"]
    out = run_task(sfn, "cloudfront:getDistribution", {"Id": did})
    want = cf.get_distribution(Id=did)
    for key in ("Id", "ARN", "DomainName"):
        assert out["Distribution"][key] == want["Distribution"][key]
    assert out["ETag"] == want["ETag"]
    got = out["Distribution"]["DistributionConfig"]
    assert got["Enabled"] is True
    assert got["Origins"] == want["Distribution"]["DistributionConfig"]["Origins"]

    inv = run_task(sfn, "cloudfront:createInvalidation", {"DistributionId": did, "InvalidationBatch": {
        "Paths": {"Quantity": 1, "Items": ["/*"]}, "CallerReference": uid()}})
    got = cf.get_invalidation(DistributionId=did, Id=inv["Invalidation"]["Id"])["Invalidation"]
    assert got["InvalidationBatch"]["Paths"]["Items"] == ["/*"]

    out = run_task(sfn, "cloudfront:getDistribution", {"Id": "ENOSUCHDIST1234"}, catch=True)
    assert out["Error"] == "CloudFront.NoSuchDistributionException"


def test_apigateway_through_its_camel_case_model(sfn, cumulo):
    apigw = cumulo.client("apigateway")
    name = f"sdk-{uid()}"
    api = run_task(sfn, "apigateway:createRestApi", {"Name": name, "Tags": {"lowKey": "v"}})
    want = apigw.get_rest_api(restApiId=api["Id"])
    assert (api["Name"], api["RootResourceId"]) == (want["name"], want["rootResourceId"])
    assert api["Tags"] == want["tags"] == {"lowKey": "v"}
    api_id = api["Id"]

    listed = run_task(sfn, "apigateway:getRestApis", {"Limit": 500})
    assert api_id in [a["Id"] for a in listed["Items"]]

    res = run_task(sfn, "apigateway:createResource", {
        "RestApiId": api_id, "ParentId": api["RootResourceId"], "PathPart": "items"})
    assert res["Path"] == "/items"
    run_task(sfn, "apigateway:putMethod", {
        "RestApiId": api_id, "ResourceId": res["Id"], "HttpMethod": "GET",
        "AuthorizationType": "NONE", "RequestParameters": {"method.request.querystring.q": False}})
    integ = run_task(sfn, "apigateway:putIntegration", {
        "RestApiId": api_id, "ResourceId": res["Id"], "HttpMethod": "GET", "Type": "MOCK",
        "RequestTemplates": {"application/json": '{"statusCode": 200}'}})
    assert integ["Type"] == "MOCK"
    assert integ["RequestTemplates"] == {"application/json": '{"statusCode": 200}'}
    run_task(sfn, "apigateway:putMethodResponse", {
        "RestApiId": api_id, "ResourceId": res["Id"], "HttpMethod": "GET", "StatusCode": "200"})
    run_task(sfn, "apigateway:putIntegrationResponse", {
        "RestApiId": api_id, "ResourceId": res["Id"], "HttpMethod": "GET", "StatusCode": "200",
        "ResponseTemplates": {"application/json": '{"ok": true}'}})

    got = run_task(sfn, "apigateway:getResources", {"RestApiId": api_id, "Embed": ["methods"]})
    want = apigw.get_resources(restApiId=api_id, embed=["methods"])["items"]
    assert sorted(r["Path"] for r in got["Items"]) == sorted(r["path"] for r in want) == ["/", "/items"]
    items = next(r for r in got["Items"] if r["Path"] == "/items")
    # Map keys (methods, status codes, parameter names) are kept; members inside are recased.
    method = items["ResourceMethods"]["GET"]
    assert method["HttpMethod"] == "GET"
    assert method["RequestParameters"] == {"method.request.querystring.q": False}
    assert method["MethodResponses"]["200"]["StatusCode"] == "200"

    dep = run_task(sfn, "apigateway:createDeployment", {
        "RestApiId": api_id, "StageName": "dev", "Variables": {"lowKey": "x"}})
    assert dep["Id"] in [d["id"] for d in apigw.get_deployments(restApiId=api_id)["items"]]
    stage = run_task(sfn, "apigateway:getStage", {"RestApiId": api_id, "StageName": "dev"})
    want = apigw.get_stage(restApiId=api_id, stageName="dev")
    assert stage["Variables"] == want["variables"] == {"lowKey": "x"}
    assert stage["DeploymentId"] == want["deploymentId"] == dep["Id"]

    out = run_task(sfn, "apigateway:getRestApi", {"RestApiId": "nosuchapi"}, catch=True)
    assert out["Error"] == "ApiGateway.NotFoundException"
    assert "(Service: ApiGateway, Status Code: 404" in out["Cause"]
    assert run_task(sfn, "apigateway:deleteRestApi", {"RestApiId": api_id}) == {}
    assert api_id not in [a["id"] for a in apigw.get_rest_apis()["items"]]


def test_apigatewayv2_through_its_model(sfn, cumulo):
    v2 = cumulo.client("apigatewayv2")
    name = f"sdk-{uid()}"
    api = run_task(sfn, "apigatewayv2:createApi", {
        "Name": name, "ProtocolType": "HTTP", "Tags": {"lowKey": "v"},
        "CorsConfiguration": {"AllowOrigins": ["https://example.com"], "MaxAge": 60}})
    want = v2.get_api(ApiId=api["ApiId"])
    assert (api["Name"], api["ProtocolType"]) == (want["Name"], want["ProtocolType"]) == (name, "HTTP")
    assert api["ApiEndpoint"] == want["ApiEndpoint"]
    # Nested members and map keys as the SDK has them.
    assert api["CorsConfiguration"] == want["CorsConfiguration"]
    assert api["CorsConfiguration"]["AllowOrigins"] == ["https://example.com"]
    assert api["Tags"] == want["Tags"] == {"lowKey": "v"}
    api_id = api["ApiId"]

    listed = run_task(sfn, "apigatewayv2:getApis", {"MaxResults": "500"})
    assert api_id in [a["ApiId"] for a in listed["Items"]]

    route = run_task(sfn, "apigatewayv2:createRoute", {
        "ApiId": api_id, "RouteKey": "GET /items",
        "RequestParameters": {"route.request.querystring.q": {"Required": True}}})
    want = v2.get_route(ApiId=api_id, RouteId=route["RouteId"])
    assert route["RouteKey"] == want["RouteKey"] == "GET /items"
    assert route["RequestParameters"] == want["RequestParameters"] == {
        "route.request.querystring.q": {"Required": True}}

    assert run_task(sfn, "apigatewayv2:deleteApi", {"ApiId": api_id}) == {}
    assert api_id not in [a["ApiId"] for a in v2.get_apis()["Items"]]

    # Errors are named by the SDK client, ApiGatewayV2, not the shared signing name.
    out = run_task(sfn, "apigatewayv2:getApi", {"ApiId": api_id}, catch=True)
    assert out["Error"] == "ApiGatewayV2.NotFoundException"
    assert "(Service: ApiGatewayV2, Status Code: 404" in out["Cause"]


def test_unknown_operations_and_services_are_refused_by_name(sfn):
    for resource in ("lambda:noSuchOperation", "nosuchservice:doIt"):
        out = run_task(sfn, resource, {"FunctionName": "f"})
        assert out["status"] == "FAILED"
        assert out["error"] == "States.Runtime"
        assert f"arn:aws:states:::aws-sdk:{resource}" in out["cause"]


def test_more_services_through_the_catalog(sfn, cumulo):
    out = run_task(sfn, "sts:getCallerIdentity", {})
    assert out["Account"] == cumulo.client("sts").get_caller_identity()["Account"]
    out = run_task(sfn, "kms:createKey", {"Description": "from sfn"})
    key = cumulo.client("kms").describe_key(KeyId=out["KeyMetadata"]["KeyId"])["KeyMetadata"]
    assert key["Description"] == "from sfn"
    # An empty query list reads back as a list, not as the empty element's text.
    out = run_task(sfn, "elasticloadbalancingv2:describeLoadBalancers", {"Names": [f"x{uid()}"]},
                   catch=True)
    assert out["Error"] == "ElasticLoadBalancingV2.LoadBalancerNotFoundException"
    out = run_task(sfn, "cloudwatch:listMetrics", {"Namespace": f"ns-{uid()}"})
    assert out == {"Metrics": []}


def same(out, want, path="$"):
    """`out` (a Task's result) is boto3's `want` in the SDK integration's JSON: the same
    members, numbers and booleans of the same types, timestamps as ISO-8601 text."""
    if isinstance(want, datetime.datetime):
        assert isinstance(out, str), f"{path}: {out!r} is not a timestamp's text"
        assert datetime.datetime.fromisoformat(out) == want, path
    elif isinstance(want, dict):
        want = {k: v for k, v in want.items() if k != "ResponseMetadata"}
        assert set(out) == set(want), f"{path}: {sorted(out)} != {sorted(want)}"
        for k in want:
            same(out[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(out, list) and len(out) == len(want), f"{path}: {out!r} != {want!r}"
        for i, (o, w) in enumerate(zip(out, want)):
            same(o, w, f"{path}[{i}]")
    else:
        assert type(out) is type(want) and out == want, f"{path}: {out!r} != {want!r}"


def test_query_answers_carry_the_sdks_types(sfn, cumulo):
    sns = cumulo.client("sns")
    arn = sns.create_topic(Name=f"sdk-{uid()}", Attributes={"DisplayName": "typed"})["TopicArn"]
    out = run_task(sfn, "sns:getTopicAttributes", {"TopicArn": arn})
    same(out, sns.get_topic_attributes(TopicArn=arn))

    iam = cumulo.client("iam")
    role = f"sdk-{uid()}"
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {
        "Service": "states.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
    iam.create_role(RoleName=role, AssumeRolePolicyDocument=trust, MaxSessionDuration=7200,
                    Tags=[{"Key": "team", "Value": "a"}])
    out = run_task(sfn, "iam:getRole", {"RoleName": role})
    assert out["Role"]["MaxSessionDuration"] == 7200
    assert isinstance(out["Role"]["CreateDate"], str)
    want = iam.get_role(RoleName=role)
    # The policy stays URL-encoded as IAM sends it (boto3 alone decodes it).
    policy = out["Role"].pop("AssumeRolePolicyDocument")
    assert json.loads(urllib.parse.unquote(policy)) == want["Role"].pop("AssumeRolePolicyDocument")
    same(out, want)
    # A request list goes as `member.N`; the answer's list and its typed members come back.
    out = run_task(sfn, "iam:listRoleTags", {"RoleName": role})
    same(out, iam.list_role_tags(RoleName=role))

    cfn = cumulo.client("cloudformation")
    out = run_task(sfn, "cloudformation:describeAccountLimits", {})
    same(out, cfn.describe_account_limits())
    template = json.dumps({"Parameters": {"Size": {"Type": "Number", "Default": "3", "NoEcho": True}},
                           "Resources": {"Q": {"Type": "AWS::SQS::Queue"}}})
    out = run_task(sfn, "cloudformation:validateTemplate", {"TemplateBody": template})
    assert out["Parameters"][0]["NoEcho"] is True
    same(out, cfn.validate_template(TemplateBody=template))

    asg = cumulo.client("autoscaling")
    out = run_task(sfn, "autoscaling:describeAccountLimits", {})
    assert isinstance(out["MaxNumberOfAutoScalingGroups"], int)
    same(out, asg.describe_account_limits())


def test_ec2_requests_and_answers_go_by_the_model(sfn, cumulo):
    ec2 = cumulo.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.77.0.0/16")["Vpc"]["VpcId"]
    ec2.create_tags(Resources=[vpc], Tags=[{"Key": "sdk", "Value": "typed"}])
    # `VpcIds` is written as `VpcId.N`, `Filters` as `Filter.N.Name`/`Filter.N.Value.M`.
    params = {"VpcIds": [vpc], "Filters": [{"Name": "tag:sdk", "Values": ["typed", "other"]}]}
    out = run_task(sfn, "ec2:describeVpcs", params)
    assert [v["VpcId"] for v in out["Vpcs"]] == [vpc]
    assert out["Vpcs"][0]["IsDefault"] is False
    same(out, ec2.describe_vpcs(**params))
    out = run_task(sfn, "ec2:describeVpcs", {"Filters": [{"Name": "is-default", "Values": ["true"]}]})
    same(out, ec2.describe_vpcs(Filters=[{"Name": "is-default", "Values": ["true"]}]))
    assert all(v["IsDefault"] is True for v in out["Vpcs"])
    # A parameter the operation does not have is refused before the call, named.
    out = run_task(sfn, "ec2:describeVpcs", {"VpcId": [vpc]}, catch=True)
    assert out["Error"] == "Ec2.Ec2Exception"
    assert 'Unknown parameter in input: "VpcId"' in out["Cause"]
    # An operation the emulation does not implement answers its 501, named.
    out = run_task(sfn, "ec2:describeFleets", {"FleetIds": ["fleet-1"]}, catch=True)
    assert "DescribeFleets" in out["Cause"]


def test_ec2_answers_use_the_sdks_member_names(sfn, cumulo):
    want = cumulo.client("ec2").describe_vpcs()["Vpcs"]
    out = run_task(sfn, "ec2:describeVpcs", {})
    assert sorted(v["VpcId"] for v in out["Vpcs"]) == sorted(v["VpcId"] for v in want)
    assert [a["CidrBlock"] for a in out["Vpcs"][0]["CidrBlockAssociationSet"]] == [
        a["CidrBlock"] for a in want[0]["CidrBlockAssociationSet"]]


def test_scheduler_schedules_from_a_state_machine(sfn, cumulo):
    """EventBridge Scheduler is rest-json: its PascalCase members go where its model binds them
    (Name in the path, GroupName in the query of a GET, the rest in the body)."""
    scheduler = cumulo.client("scheduler")
    queue = cumulo.client("sqs").create_queue(QueueName=f"sdk-{uid()}")["QueueUrl"]
    queue_arn = cumulo.client("sqs").get_queue_attributes(
        QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    group = f"sdk-{uid()}"
    made = run_task(sfn, "scheduler:createScheduleGroup",
                    {"Name": group, "Tags": [{"Key": "team", "Value": "a"}]})
    assert made["ScheduleGroupArn"] == scheduler.get_schedule_group(Name=group)["Arn"]
    # A label holding an ARN (`/tags/{ResourceArn}`) is encoded whole.
    tags = run_task(sfn, "scheduler:listTagsForResource", {"ResourceArn": made["ScheduleGroupArn"]})
    assert tags == {"Tags": [{"Key": "team", "Value": "a"}]}

    name = f"sdk-{uid()}"
    created = run_task(sfn, "scheduler:createSchedule", {
        "Name": name, "GroupName": group, "ScheduleExpression": "rate(1 day)",
        "State": "DISABLED", "FlexibleTimeWindow": {"Mode": "OFF"},
        "Target": {"Arn": queue_arn, "RoleArn": ROLE, "Input": "{\"from\": \"sfn\"}"}})
    want = scheduler.get_schedule(Name=name, GroupName=group)
    assert created == {"ScheduleArn": want["Arn"]}
    got = run_task(sfn, "scheduler:getSchedule", {"Name": name, "GroupName": group})
    assert (got["Name"], got["GroupName"], got["Arn"]) == (name, group, want["Arn"])
    assert got["ScheduleExpression"] == "rate(1 day)" and got["State"] == "DISABLED"
    assert got["Target"] == want["Target"]
    assert got["Target"]["Input"] == "{\"from\": \"sfn\"}"
    assert got["FlexibleTimeWindow"] == {"Mode": "OFF"}

    # The schedule is not in the default group: GroupName went in the query.
    out = run_task(sfn, "scheduler:getSchedule", {"Name": name}, catch=True)
    assert out["Error"] == "Scheduler.ResourceNotFoundException"
    assert "(Service: Scheduler, Status Code: 404" in out["Cause"]
    # Scheduler's model declares ValidationException: the SDK's class, kept by name.
    out = run_task(sfn, "scheduler:createSchedule", {
        "Name": f"sdk-{uid()}", "ScheduleExpression": "every day",
        "FlexibleTimeWindow": {"Mode": "OFF"}, "Target": {"Arn": queue_arn, "RoleArn": ROLE}},
        catch=True)
    assert out["Error"] == "Scheduler.ValidationException"
    assert "(Service: Scheduler, Status Code: 400" in out["Cause"]

    assert run_task(sfn, "scheduler:deleteSchedule", {"Name": name, "GroupName": group}) == {}
    assert name not in [s["Name"] for s in scheduler.list_schedules(GroupName=group)["Schedules"]]
