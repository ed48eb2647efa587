"""API Gateway REST APIs (v1) end to end: the control plane through boto3 and the AWS CLI, held
to AWS's recorded answers (../shared/aws-recordings/apigateway), and deployed stages answering
real HTTP at both URL forms (`<api-id>.execute-api.localhost` and `/_aws/execute-api/<api-id>`)
backed by real cumulo Lambda functions."""
import base64
import io
import json
import urllib.error
import urllib.request
import uuid
import zipfile

import botocore.exceptions
import pytest
from conftest import CumuloServer

ROLE = "arn:aws:iam::000000000000:role/lambda-role"
WAIT = {"Delay": 0.2, "MaxAttempts": 100}

ECHO = """
import json, base64
def handler(event, context):
    q = event.get("queryStringParameters") or {}
    if q.get("mode") == "raw":
        return json.loads(q["payload"])
    if q.get("mode") == "b64":
        return {"statusCode": 200, "body": base64.b64encode(b"test-data").decode(), "isBase64Encoded": True,
                "headers": {"Content-Type": "application/octet-stream"}}
    return {"statusCode": int(q.get("status", 200)),
            "headers": {"x-echo": "yes", "header-bool": True},
            "multiValueHeaders": {"set-cookie": ["a=1", "b=2"]},
            "body": json.dumps(event)}
"""

PLAIN = """
def handler(event, context):
    if event.get("fail"):
        raise Exception("Bad request: " + event["fail"])
    return {"got": event, "sum": event.get("a", 0) + event.get("b", 0)}
"""

AUTHORIZER = """
def handler(event, context):
    token = event.get("authorizationToken") or (event.get("headers") or {}).get("Authorization")
    if token == "boom":
        raise Exception("Unauthorized")
    effect = "Allow" if token == "allow" else "Deny"
    return {"principalId": "user-1", "context": {"tier": "gold"},
            "policyDocument": {"Version": "2012-10-17", "Statement": [
                {"Action": "execute-api:Invoke", "Effect": effect, "Resource": event["methodArn"]}]}}
"""

COUNTING_AUTHORIZER = """
import itertools
COUNT = itertools.count(1)
def handler(event, context):
    return {"principalId": "p", "context": {"calls": next(COUNT)},
            "policyDocument": {"Version": "2012-10-17", "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": "*"}]}}
"""


def uid():
    return uuid.uuid4().hex[:8]


def zip_of(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return buf.getvalue()


@pytest.fixture(scope="module")
def apigw(cumulo):
    return cumulo.client("apigateway")


@pytest.fixture(scope="module")
def lam(cumulo):
    return cumulo.client("lambda")


def make_function(lam, source):
    name = f"fn-{uid()}"
    lam.create_function(FunctionName=name, Runtime="python3.11", Role=ROLE, Handler="app.handler",
                        Code={"ZipFile": zip_of({"app.py": source})})
    lam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig=WAIT)
    return lam.get_function(FunctionName=name)["Configuration"]["FunctionArn"]


def lambda_uri(arn):
    return f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{arn}/invocations"


def http(cumulo, method, url_path, host=None, headers=None, body=None):
    """One request to the server; `host` sets the Host header (the execute-api form)."""
    req = urllib.request.Request(cumulo.endpoint + url_path, method=method, data=body)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    if host:
        req.add_header("Host", host)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.headers.get_all("set-cookie") or [], r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.headers.get_all("set-cookie") or [], e.read()


def both_forms(cumulo, api_id, stage, path, method="GET", **kw):
    """The same request at both URL forms; they must agree."""
    a = http(cumulo, method, f"/_aws/execute-api/{api_id}/{stage}{path}", **kw)
    b = http(cumulo, method, f"/{stage}{path}", host=f"{api_id}.execute-api.localhost:{cumulo.port}", **kw)
    assert (a[0], a[3] if b"requestId" not in a[3] else b"") == (b[0], b[3] if b"requestId" not in b[3] else b"")
    return a


def err(e):
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"], \
        e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_rest_api_crud_and_recorded_errors(apigw, cumulo):
    api = apigw.create_rest_api(name=f"api-{uid()}", description="this is my api")
    assert len(api["id"]) == 10 and api["id"].isalnum() and api["id"].lower() == api["id"]
    assert api["endpointConfiguration"] == {"types": ["EDGE"], "ipAddressType": "ipv4"}
    assert api["apiKeySource"] == "HEADER" and api["disableExecuteApiEndpoint"] is False
    resources = apigw.get_resources(restApiId=api["id"])["items"]
    assert resources == [{"id": api["rootResourceId"], "path": "/"}]
    assert api["id"] in [a["id"] for a in apigw.get_rest_apis()["items"]]

    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.get_rest_api(restApiId="api_id")
    assert err(e) == ("NotFoundException", "Invalid API identifier specified 000000000000:api_id", 404)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.create_rest_api(name="x", description="")
    assert err(e) == ("BadRequestException", "Description cannot be an empty string", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.create_rest_api(name="x", endpointConfiguration={"types": ["EDGE", "REGIONAL"]})
    assert err(e) == ("BadRequestException", "Cannot create an api with multiple Endpoint Types.", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.update_rest_api(restApiId=api["id"], patchOperations=[{"op": "add", "path": "/name", "value": "n"}])
    assert err(e) == ("BadRequestException", "Invalid patch operation specified. Must be one of: [replace]", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.update_rest_api(restApiId=api["id"], patchOperations=[{"op": "wrong", "path": "/name"}])
    assert err(e)[0] == "ValidationException"

    upd = apigw.update_rest_api(restApiId=api["id"], patchOperations=[
        {"op": "replace", "path": "/name", "value": "renamed"},
        {"op": "add", "path": "/binaryMediaTypes/image~1png"},
        {"op": "replace", "path": "/endpointConfiguration/types/EDGE", "value": "REGIONAL"}])
    assert upd["name"] == "renamed" and upd["binaryMediaTypes"] == ["image/png"]
    assert upd["endpointConfiguration"]["types"] == ["REGIONAL"]
    # Refused changes left it as it was.
    assert apigw.get_rest_api(restApiId=api["id"])["description"] == "this is my api"

    apigw.delete_rest_api(restApiId=api["id"])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.get_rest_api(restApiId=api["id"])
    assert err(e)[0] == "NotFoundException"


def test_resources_methods_and_their_errors(apigw):
    api = apigw.create_rest_api(name=f"api-{uid()}")
    root = api["rootResourceId"]
    pets = apigw.create_resource(restApiId=api["id"], parentId=root, pathPart="pets")
    assert pets["path"] == "/pets" and len(pets["id"]) == 6
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.create_resource(restApiId=api["id"], parentId=root, pathPart="pets")
    assert err(e) == ("ConflictException", "Another resource with the same parent already has this name: pets", 409)
    proxy = apigw.create_resource(restApiId=api["id"], parentId=root, pathPart="{proxy+}")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.create_resource(restApiId=api["id"], parentId=proxy["id"], pathPart="child")
    assert err(e) == ("BadRequestException", "Cannot create a child of a resource with a greedy path variable: {proxy+}", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.create_resource(restApiId=api["id"], parentId=root, pathPart="{other}")
    assert err(e) == ("BadRequestException", "A sibling ({proxy+}) of this resource already has a variable path part -- only one is allowed", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.update_resource(restApiId=api["id"], resourceId=root, patchOperations=[{"op": "replace", "path": "/pathPart", "value": "x"}])
    assert err(e) == ("BadRequestException", "Root resource cannot update its pathPart.", 400)

    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.put_method(restApiId=api["id"], resourceId=pets["id"], httpMethod="WRONG", authorizationType="NONE")
    assert err(e) == ("BadRequestException", "Invalid HttpMethod specified. Valid options are GET,PUT,POST,DELETE,PATCH,OPTIONS,HEAD,ANY", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.put_method(restApiId=api["id"], resourceId=pets["id"], httpMethod="GET", authorizationType="CUSTOM")
    assert err(e)[1].startswith("Invalid authorizer ID specified.")
    m = apigw.put_method(restApiId=api["id"], resourceId=pets["id"], httpMethod="GET", authorizationType="NONE",
                         requestParameters={"method.request.querystring.q": True})
    assert m["apiKeyRequired"] is False and m["requestParameters"] == {"method.request.querystring.q": True}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.put_integration(restApiId=api["id"], resourceId=pets["id"], httpMethod="GET", type="HTTP",
                              integrationHttpMethod="GET", uri="not-a-url")
    assert err(e) == ("BadRequestException", "Invalid HTTP endpoint specified for URI", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.put_integration(restApiId=api["id"], resourceId=pets["id"], httpMethod="GET", type="AWS",
                              integrationHttpMethod="POST", uri="not-an-arn")
    assert err(e) == ("BadRequestException", "Invalid ARN specified in the request", 400)
    integ = apigw.put_integration(restApiId=api["id"], resourceId=pets["id"], httpMethod="GET", type="MOCK",
                                  requestTemplates={"application/json": '{"statusCode": 200}'})
    assert integ["type"] == "MOCK" and integ["timeoutInMillis"] == 29000 and integ["passthroughBehavior"] == "WHEN_NO_MATCH"
    apigw.put_method_response(restApiId=api["id"], resourceId=pets["id"], httpMethod="GET", statusCode="200")
    apigw.put_integration_response(restApiId=api["id"], resourceId=pets["id"], httpMethod="GET", statusCode="200",
                                   responseTemplates={"application/json": "{}"})
    got = apigw.get_method(restApiId=api["id"], resourceId=pets["id"], httpMethod="GET")
    assert got["methodIntegration"]["integrationResponses"]["200"]["statusCode"] == "200"
    assert got["methodResponses"] == {"200": {"statusCode": "200"}}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.get_integration_response(restApiId=api["id"], resourceId=pets["id"], httpMethod="GET", statusCode="201")
    assert err(e) == ("NotFoundException", "Invalid Response status code specified", 404)
    listed = apigw.get_resources(restApiId=api["id"], embed=["methods"])["items"]
    assert {r["path"] for r in listed} == {"/", "/pets", "/{proxy+}"}

    # Models and validators with AWS's messages.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.create_model(restApiId=api["id"], name="M", contentType="application/json", schema="{}")
    assert err(e) == ("BadRequestException", "Model schema must have at least 1 property or array items defined", 400)
    apigw.create_model(restApiId=api["id"], name="M", contentType="application/json", schema='{"type": "object"}')
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.create_model(restApiId=api["id"], name="M", contentType="application/json", schema='{"type": "object"}')
    assert err(e) == ("ConflictException", "Model name already exists for this REST API", 409)
    v = apigw.create_request_validator(restApiId=api["id"], name="v", validateRequestBody=True)
    assert v["validateRequestParameters"] is False
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.create_request_validator(restApiId="nope", name="v")
    assert err(e) == ("BadRequestException", "Invalid REST API identifier specified", 400)

    # Deployments and stages.
    dep = apigw.create_deployment(restApiId=api["id"], stageName="dev", variables={"v": "1"})
    stage = apigw.get_stage(restApiId=api["id"], stageName="dev")
    assert stage["deploymentId"] == dep["id"] and stage["variables"] == {"v": "1"}
    stage = apigw.update_stage(restApiId=api["id"], stageName="dev", patchOperations=[
        {"op": "replace", "path": "/variables/v", "value": "2"},
        {"op": "replace", "path": "/*/*/logging/loglevel", "value": "INFO"}])
    assert stage["variables"] == {"v": "2"} and stage["methodSettings"]["*/*"]["loggingLevel"] == "INFO"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.delete_deployment(restApiId=api["id"], deploymentId=dep["id"])
    assert err(e) == ("BadRequestException", "Active stages pointing to this deployment must be moved or deleted", 400)


def test_gateway_responses_keys_plans_domains_tags(apigw):
    api = apigw.create_rest_api(name=f"api-{uid()}")
    d = apigw.get_gateway_response(restApiId=api["id"], responseType="MISSING_AUTHENTICATION_TOKEN")
    assert d == {**d, "defaultResponse": True, "statusCode": "403",
                 "responseTemplates": {"application/json": '{"message":$context.error.messageString}'}}
    assert len(apigw.get_gateway_responses(restApiId=api["id"])["items"]) == 21
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.delete_gateway_response(restApiId=api["id"], responseType="DEFAULT_4XX")
    assert err(e) == ("NotFoundException", "Gateway response type not defined on api", 404)

    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.create_api_key(name="k", value="short")
    assert err(e) == ("BadRequestException", "API Key value should be at least 20 characters", 400)
    key = apigw.create_api_key(name=f"k-{uid()}", enabled=True)
    assert len(key["value"]) == 40 and key["stageKeys"] == []
    assert "value" not in apigw.get_api_key(apiKey=key["id"])
    assert apigw.get_api_key(apiKey=key["id"], includeValue=True)["value"] == key["value"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.update_api_key(apiKey=key["id"], patchOperations=[{"op": "replace", "path": "/id", "value": "x"}])
    assert err(e)[1] == "Invalid patch path  '/id' specified for op 'replace'. Must be one of: [/description, /enabled, /name, /customerId]"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.create_usage_plan(name="p", apiStages=[{"apiId": api["id"], "stage": "nope"}])
    assert err(e)[0] == "NotFoundException" and "Invalid API Stage" in err(e)[1]
    plan = apigw.create_usage_plan(name="p", throttle={"burstLimit": 1, "rateLimit": 2.0},
                                   quota={"limit": 10, "period": "DAY"}, tags={"t": "v"})
    assert plan["quota"] == {"limit": 10, "offset": 0, "period": "DAY"}
    pk = apigw.create_usage_plan_key(usagePlanId=plan["id"], keyId=key["id"], keyType="API_KEY")
    assert pk["type"] == "API_KEY" and pk["value"] == key["value"]
    assert [k["id"] for k in apigw.get_usage_plan_keys(usagePlanId=plan["id"])["items"]] == [key["id"]]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.get_usage_plan(usagePlanId="nope")
    assert err(e) == ("NotFoundException", "Invalid Usage Plan ID specified", 404)

    dom = apigw.create_domain_name(domainName=f"{uid()}.example.com", regionalCertificateArn="arn:aws:acm:us-east-1:000000000000:certificate/x",
                                   endpointConfiguration={"types": ["REGIONAL"]})
    assert dom["regionalDomainName"].endswith(".amazonaws.com")
    apigw.put_method(restApiId=api["id"], resourceId=api["rootResourceId"], httpMethod="GET", authorizationType="NONE")
    apigw.put_integration(restApiId=api["id"], resourceId=api["rootResourceId"], httpMethod="GET", type="MOCK")
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    m = apigw.create_base_path_mapping(domainName=dom["domainName"], restApiId=api["id"], stage="prod")
    m.pop("ResponseMetadata")
    assert m["basePath"] == "(none)"
    assert apigw.get_base_path_mappings(domainName=dom["domainName"])["items"] == [m]

    arn = f"arn:aws:apigateway:us-east-1::/restapis/{api['id']}"
    apigw.tag_resource(resourceArn=arn, tags={"a": "1", "b": "2"})
    apigw.untag_resource(resourceArn=arn, tagKeys=["b"])
    assert apigw.get_tags(resourceArn=arn)["tags"] == {"a": "1"}
    assert apigw.get_rest_api(restApiId=api["id"])["tags"] == {"a": "1"}


def proxy_api(apigw, lam, cumulo):
    fn = make_function(lam, ECHO)
    api = apigw.create_rest_api(name=f"proxy-{uid()}")
    res = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="{proxy+}")
    apigw.put_method(restApiId=api["id"], resourceId=res["id"], httpMethod="ANY", authorizationType="NONE")
    apigw.put_integration(restApiId=api["id"], resourceId=res["id"], httpMethod="ANY", type="AWS_PROXY",
                          integrationHttpMethod="POST", uri=lambda_uri(fn))
    dep = apigw.create_deployment(restApiId=api["id"], stageName="stage", variables={"env": "test"})
    return api, res, dep


def test_lambda_proxy_event_and_response(apigw, lam, cumulo):
    api, res, dep = proxy_api(apigw, lam, cumulo)
    status, headers, cookies, body = both_forms(
        cumulo, api["id"], "stage", "/proxy-value/x?category=electronics&category=books&price=10",
        method="POST", headers={"tEsT-HEADeR": "aValUE", "Content-Type": "application/json"},
        body=b'{"message": "hello world"}')
    assert status == 200
    assert headers["x-echo"] == "yes" and headers["header-bool"] == "true"
    assert cookies == ["a=1", "b=2"]
    event = json.loads(body)
    # The shape AWS builds (test_lambda_aws_proxy_integration's recording).
    assert set(event) == {"body", "headers", "httpMethod", "isBase64Encoded", "multiValueHeaders",
                          "multiValueQueryStringParameters", "path", "pathParameters",
                          "queryStringParameters", "requestContext", "resource", "stageVariables"}
    assert event["body"] == '{"message": "hello world"}' and event["isBase64Encoded"] is False
    assert event["httpMethod"] == "POST" and event["path"] == "/proxy-value/x"
    assert event["resource"] == "/{proxy+}" and event["pathParameters"] == {"proxy": "proxy-value/x"}
    assert event["queryStringParameters"] == {"category": "books", "price": "10"}
    assert event["multiValueQueryStringParameters"] == {"category": ["electronics", "books"], "price": ["10"]}
    assert event["headers"]["Test-Header"] == "aValUE" and event["multiValueHeaders"]["Test-Header"] == ["aValUE"]
    assert event["stageVariables"] == {"env": "test"}
    ctx = event["requestContext"]
    assert set(ctx) >= {"accountId", "apiId", "deploymentId", "domainName", "domainPrefix", "extendedRequestId",
                        "httpMethod", "identity", "path", "protocol", "requestId", "requestTime",
                        "requestTimeEpoch", "resourceId", "resourcePath", "stage"}
    assert (ctx["apiId"], ctx["deploymentId"], ctx["resourceId"], ctx["stage"], ctx["path"]) == \
        (api["id"], dep["id"], res["id"], "stage", "/stage/proxy-value/x")
    assert set(ctx["identity"]) == {"accessKey", "accountId", "caller", "cognitoAuthenticationProvider",
                                    "cognitoAuthenticationType", "cognitoIdentityId", "cognitoIdentityPoolId",
                                    "principalOrgId", "sourceIp", "user", "userAgent", "userArn"}

    # Without query or body: the nulls AWS sends.
    status, _, _, body = both_forms(cumulo, api["id"], "stage", "/a")
    event = json.loads(body)
    assert (event["body"], event["queryStringParameters"], event["multiValueQueryStringParameters"]) == (None, None, None)
    # Status codes, base64 bodies and malformed answers (test_aws_proxy_response_payload_format_validation).
    assert both_forms(cumulo, api["id"], "stage", "/a?status=418")[0] == 418
    # Without binary media types the base64 text is sent as it is (the recording's
    # invoke-api-b64-encoded-true); with one matching Accept it is decoded.
    status, headers, _, body = both_forms(cumulo, api["id"], "stage", "/a?mode=b64")
    assert (status, body) == (200, b"dGVzdC1kYXRh")
    apigw.update_rest_api(restApiId=api["id"], patchOperations=[{"op": "add", "path": "/binaryMediaTypes/image~1png"}])
    apigw.create_deployment(restApiId=api["id"], stageName="stage")
    status, headers, _, body = both_forms(cumulo, api["id"], "stage", "/a?mode=b64", headers={"Accept": "image/png"})
    assert (status, body) == (200, b"test-data")
    for bad in ['{"wrong": "format"}', 'null', '"just a string"', '{"statusCode": "abc"}',
                '{"multiValueHeaders": {"h": "not-a-list"}}']:
        q = urllib.parse.urlencode({"mode": "raw", "payload": bad})
        status, _, _, body = both_forms(cumulo, api["id"], "stage", f"/a?{q}")
        assert (status, json.loads(body)) == (502, {"message": "Internal server error"}), bad
    q = urllib.parse.urlencode({"mode": "raw", "payload": '{"statusCode": "201"}'})
    assert both_forms(cumulo, api["id"], "stage", f"/a?{q}")[0] == 201

    # Unknown routes and stages: AWS's 403.
    api2 = apigw.create_rest_api(name=f"api-{uid()}")
    apigw.put_method(restApiId=api2["id"], resourceId=api2["rootResourceId"], httpMethod="GET", authorizationType="NONE")
    apigw.put_integration(restApiId=api2["id"], resourceId=api2["rootResourceId"], httpMethod="GET", type="MOCK",
                          requestTemplates={"application/json": '{"statusCode": 200}'})
    apigw.put_integration_response(restApiId=api2["id"], resourceId=api2["rootResourceId"], httpMethod="GET",
                                   statusCode="200", responseTemplates={"application/json": '{"ok": true}'})
    apigw.create_deployment(restApiId=api2["id"], stageName="dev")
    status, _, _, body = both_forms(cumulo, api2["id"], "dev", "/nope")
    assert (status, json.loads(body)) == (403, {"message": "Missing Authentication Token"})
    status, _, _, body = both_forms(cumulo, api2["id"], "dev", "/", method="POST", body=b"{}")
    assert (status, json.loads(body)) == (403, {"message": "Missing Authentication Token"})
    status, _, _, body = both_forms(cumulo, api2["id"], "dev", "/")
    assert (status, json.loads(body)) == (200, {"ok": True})


import urllib.parse  # noqa: E402


def test_aws_and_mock_integrations_with_templates(apigw, lam, cumulo):
    fn = make_function(lam, PLAIN)
    api = apigw.create_rest_api(name=f"vtl-{uid()}")
    calc = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="calc")
    item = apigw.create_resource(restApiId=api["id"], parentId=calc["id"], pathPart="{id}")
    apigw.put_method(restApiId=api["id"], resourceId=item["id"], httpMethod="POST", authorizationType="NONE")
    template = """#set($body = $input.path('$'))
{"a": $body.a, "b": $body.b, "id": "$input.params('id')", "q": "$util.escapeJavaScript($input.params('q'))",
 "stage": "$context.stage", "env": "$stageVariables.env"#if($body.fail), "fail": "$body.fail"#end}"""
    apigw.put_integration(restApiId=api["id"], resourceId=item["id"], httpMethod="POST", type="AWS",
                          integrationHttpMethod="POST", uri=lambda_uri(fn),
                          requestTemplates={"application/json": template})
    apigw.put_integration_response(restApiId=api["id"], resourceId=item["id"], httpMethod="POST", statusCode="200",
                                   selectionPattern="",
                                   responseTemplates={"application/json": '{"result": $input.json(\'$.sum\'), "id": "$input.path(\'$.got.id\')"}'},
                                   responseParameters={"method.response.header.x-static": "'fixed'"})
    apigw.put_integration_response(restApiId=api["id"], resourceId=item["id"], httpMethod="POST", statusCode="400",
                                   selectionPattern="Bad request.*",
                                   responseTemplates={"application/json": '{"error": "$input.path(\'$.errorMessage\')"}'})
    for code in ("200", "400"):
        apigw.put_method_response(restApiId=api["id"], resourceId=item["id"], httpMethod="POST", statusCode=code)
    apigw.create_deployment(restApiId=api["id"], stageName="dev", variables={"env": "e1"})

    status, headers, _, body = both_forms(cumulo, api["id"], "dev", "/calc/42?q=he%22y", method="POST",
                                          headers={"Content-Type": "application/json"}, body=b'{"a": 2, "b": 3}')
    assert (status, json.loads(body)) == (200, {"result": 5, "id": "42"})
    assert headers["x-static"] == "fixed"
    status, _, _, body = both_forms(cumulo, api["id"], "dev", "/calc/1", method="POST",
                                    headers={"Content-Type": "application/json"}, body=b'{"a": 1, "b": 1, "fail": "nope"}')
    assert (status, json.loads(body)) == (400, {"error": "Bad request: nope"})

    # A template using what cumulo's VTL lacks: a 500 naming it.
    mock = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="mock")
    apigw.put_method(restApiId=api["id"], resourceId=mock["id"], httpMethod="GET", authorizationType="NONE")
    apigw.put_integration(restApiId=api["id"], resourceId=mock["id"], httpMethod="GET", type="MOCK",
                          requestTemplates={"application/json": '{"statusCode": $input.params("code")}'})
    apigw.put_integration_response(restApiId=api["id"], resourceId=mock["id"], httpMethod="GET", statusCode="200",
                                   responseTemplates={"application/json": '{"mock": "$context.httpMethod"}'})
    apigw.put_integration_response(restApiId=api["id"], resourceId=mock["id"], httpMethod="GET", statusCode="404",
                                   selectionPattern="404",
                                   responseTemplates={"application/json": '$util.appendToList($x)'})
    apigw.create_deployment(restApiId=api["id"], stageName="dev")
    status, _, _, body = both_forms(cumulo, api["id"], "dev", "/mock?code=200")
    assert (status, json.loads(body)) == (200, {"mock": "GET"})
    status, _, _, body = both_forms(cumulo, api["id"], "dev", "/mock?code=404")
    assert status == 500 and "$util.appendToList()" in json.loads(body)["message"]


def test_api_keys_and_lambda_authorizer(apigw, lam, cumulo):
    fn = make_function(lam, ECHO)
    auth_fn = make_function(lam, AUTHORIZER)
    api = apigw.create_rest_api(name=f"auth-{uid()}")
    authz = apigw.create_authorizer(restApiId=api["id"], name="tok", type="TOKEN", authorizerUri=lambda_uri(auth_fn),
                                    identitySource="method.request.header.Authorization",
                                    authorizerResultTtlInSeconds=0)
    assert authz["authorizerResultTtlInSeconds"] == 0
    secured = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="secured")
    keyed = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="keyed")
    apigw.put_method(restApiId=api["id"], resourceId=secured["id"], httpMethod="GET", authorizationType="CUSTOM",
                     authorizerId=authz["id"])
    apigw.put_method(restApiId=api["id"], resourceId=keyed["id"], httpMethod="GET", authorizationType="NONE",
                     apiKeyRequired=True)
    for r in (secured, keyed):
        apigw.put_integration(restApiId=api["id"], resourceId=r["id"], httpMethod="GET", type="AWS_PROXY",
                              integrationHttpMethod="POST", uri=lambda_uri(fn))
    apigw.create_deployment(restApiId=api["id"], stageName="dev")

    status, _, _, body = both_forms(cumulo, api["id"], "dev", "/secured")
    assert (status, json.loads(body)) == (401, {"message": "Unauthorized"})
    status, _, _, body = both_forms(cumulo, api["id"], "dev", "/secured", headers={"Authorization": "deny"})
    assert (status, json.loads(body)) == (403, {"Message": "User is not authorized to access this resource with an explicit deny"})
    status, _, _, body = both_forms(cumulo, api["id"], "dev", "/secured", headers={"Authorization": "boom"})
    assert status == 401
    status, _, _, body = both_forms(cumulo, api["id"], "dev", "/secured", headers={"Authorization": "allow"})
    assert status == 200
    ctx = json.loads(body)["requestContext"]["authorizer"]
    assert ctx["principalId"] == "user-1" and ctx["tier"] == "gold"

    # A cached answer is reused for its TTL: the authorizer runs once for the same token.
    counting = make_function(lam, COUNTING_AUTHORIZER)
    cached = apigw.create_authorizer(restApiId=api["id"], name="cached", type="TOKEN",
                                     authorizerUri=lambda_uri(counting),
                                     identitySource="method.request.header.Authorization",
                                     authorizerResultTtlInSeconds=300)
    counted = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="counted")
    apigw.put_method(restApiId=api["id"], resourceId=counted["id"], httpMethod="GET", authorizationType="CUSTOM",
                     authorizerId=cached["id"])
    apigw.put_integration(restApiId=api["id"], resourceId=counted["id"], httpMethod="GET", type="AWS_PROXY",
                          integrationHttpMethod="POST", uri=lambda_uri(fn))
    apigw.create_deployment(restApiId=api["id"], stageName="dev")
    seen = [json.loads(both_forms(cumulo, api["id"], "dev", "/counted", headers={"Authorization": tok})[3])
            ["requestContext"]["authorizer"]["calls"] for tok in ("t1", "t1", "t2")]
    assert seen[0] == seen[1] != seen[2]

    status, _, _, body = both_forms(cumulo, api["id"], "dev", "/keyed")
    assert (status, json.loads(body)) == (403, {"message": "Forbidden"})
    key = apigw.create_api_key(name=f"k-{uid()}", enabled=True)
    status, _, _, body = both_forms(cumulo, api["id"], "dev", "/keyed", headers={"x-api-key": key["value"]})
    assert status == 403  # a key in no usage plan of this stage
    plan = apigw.create_usage_plan(name="p", apiStages=[{"apiId": api["id"], "stage": "dev"}])
    apigw.create_usage_plan_key(usagePlanId=plan["id"], keyId=key["id"], keyType="API_KEY")
    status, _, _, body = both_forms(cumulo, api["id"], "dev", "/keyed", headers={"x-api-key": key["value"]})
    assert status == 200


OPENAPI = {
    "openapi": "3.0.1",
    "info": {"title": "imported", "version": "1"},
    "paths": {
        "/hello/{name}": {
            "get": {
                "parameters": [{"name": "name", "in": "path", "required": True}],
                "responses": {"200": {"description": "ok"}},
                "x-amazon-apigateway-integration": {
                    "type": "mock", "requestTemplates": {"application/json": '{"statusCode": 200}'},
                    "responses": {"default": {"statusCode": "200",
                                              "responseTemplates": {"application/json": '{"hello": "$input.params(\'name\')"}'}}},
                },
            }
        }
    },
}


def test_import_put_and_export(apigw, cumulo):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        apigw.import_rest_api(body=b"not: [valid")
    assert err(e) == ("BadRequestException", "Invalid OpenAPI input.", 400)
    before = len(apigw.get_rest_apis()["items"])
    with pytest.raises(botocore.exceptions.ClientError):
        apigw.import_rest_api(body=json.dumps({"paths": {}}).encode())
    assert len(apigw.get_rest_apis()["items"]) == before

    api = apigw.import_rest_api(body=json.dumps(OPENAPI).encode())
    assert api["name"] == "imported"
    paths = {r["path"] for r in apigw.get_resources(restApiId=api["id"])["items"]}
    assert paths == {"/", "/hello", "/hello/{name}"}
    apigw.create_deployment(restApiId=api["id"], stageName="v1")
    status, _, _, body = both_forms(cumulo, api["id"], "v1", "/hello/ann")
    assert (status, json.loads(body)) == (200, {"hello": "ann"})

    exported = json.loads(apigw.get_export(restApiId=api["id"], stageName="v1", exportType="oas30")["body"].read())
    assert exported["openapi"].startswith("3.") and "/hello/{name}" in exported["paths"]
    assert exported["paths"]["/hello/{name}"]["get"]["x-amazon-apigateway-integration"]["type"] == "mock"

    spec = dict(OPENAPI, paths={"/other": OPENAPI["paths"]["/hello/{name}"]})
    apigw.put_rest_api(restApiId=api["id"], mode="overwrite", body=json.dumps(spec).encode())
    paths = {r["path"] for r in apigw.get_resources(restApiId=api["id"])["items"]}
    assert paths == {"/", "/other"}


def test_cli_and_restart_survival(tmp_path):
    server = CumuloServer(data_dir=tmp_path).start()
    try:
        created = server.aws("apigateway", "create-rest-api", "--name", "durable")
        api_id = created["id"]
        c = server.client("apigateway")
        c.put_method(restApiId=api_id, resourceId=created["rootResourceId"], httpMethod="GET", authorizationType="NONE")
        c.put_integration(restApiId=api_id, resourceId=created["rootResourceId"], httpMethod="GET", type="MOCK",
                          requestTemplates={"application/json": '{"statusCode": 200}'})
        c.put_integration_response(restApiId=api_id, resourceId=created["rootResourceId"], httpMethod="GET",
                                   statusCode="200", responseTemplates={"application/json": '{"alive": true}'})
        c.create_deployment(restApiId=api_id, stageName="prod")
        key = c.create_api_key(name="durable-key")
        server.stop()
        server.start()
        c = server.client("apigateway")
        assert c.get_rest_api(restApiId=api_id)["name"] == "durable"
        assert c.get_stage(restApiId=api_id, stageName="prod")["stageName"] == "prod"
        assert c.get_api_key(apiKey=key["id"])["name"] == "durable-key"
        status, _, _, body = http(server, "GET", f"/_aws/execute-api/{api_id}/prod/")
        assert (status, json.loads(body)) == (200, {"alive": True})
        listed = server.aws("apigateway", "get-rest-apis")["items"]
        assert [a["id"] for a in listed] == [api_id]
    finally:
        server.stop()


STACK = """
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Greeting:
    Type: String
    Default: hello
Resources:
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.11
      Handler: index.handler
      Role: arn:aws:iam::000000000000:role/lambda-role
      Environment:
        Variables:
          GREETING: !Ref Greeting
      Code:
        ZipFile: |
          import json, os
          def handler(event, context):
              path = event.get("path") or event.get("rawPath")
              return {"statusCode": 200, "body": json.dumps({"greeting": os.environ["GREETING"], "path": path})}
  Permission:
    Type: AWS::Lambda::Permission
    Properties:
      FunctionName: !Ref Fn
      Action: lambda:InvokeFunction
      Principal: apigateway.amazonaws.com
  Api:
    Type: AWS::ApiGateway::RestApi
    Properties:
      Name: !Sub "${AWS::StackName}-rest"
      EndpointConfiguration:
        Types: [REGIONAL]
      Tags:
        - Key: team
          Value: a
  Proxy:
    Type: AWS::ApiGateway::Resource
    Properties:
      RestApiId: !Ref Api
      ParentId: !GetAtt Api.RootResourceId
      PathPart: "{proxy+}"
  ProxyAny:
    Type: AWS::ApiGateway::Method
    Properties:
      RestApiId: !Ref Api
      ResourceId: !Ref Proxy
      HttpMethod: ANY
      AuthorizationType: NONE
      Integration:
        Type: AWS_PROXY
        IntegrationHttpMethod: POST
        Uri: !Sub "arn:aws:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/${Fn.Arn}/invocations"
  RootGet:
    Type: AWS::ApiGateway::Method
    Properties:
      RestApiId: !Ref Api
      ResourceId: !GetAtt Api.RootResourceId
      HttpMethod: GET
      AuthorizationType: NONE
      MethodResponses:
        - StatusCode: "200"
      Integration:
        Type: MOCK
        RequestTemplates:
          application/json: '{"statusCode": 200}'
        IntegrationResponses:
          - StatusCode: "200"
            ResponseTemplates:
              application/json: !Sub '{"mock": "${Greeting}"}'
  Deployment:
    Type: AWS::ApiGateway::Deployment
    DependsOn: [ProxyAny, RootGet]
    Properties:
      RestApiId: !Ref Api
  Stage:
    Type: AWS::ApiGateway::Stage
    Properties:
      RestApiId: !Ref Api
      DeploymentId: !Ref Deployment
      StageName: prod
      Variables:
        greeting: !Ref Greeting
  Key:
    Type: AWS::ApiGateway::ApiKey
    Properties:
      Enabled: true
  Plan:
    Type: AWS::ApiGateway::UsagePlan
    DependsOn: Stage
    Properties:
      UsagePlanName: !Sub "${AWS::StackName}-plan"
      ApiStages:
        - ApiId: !Ref Api
          Stage: prod
  PlanKey:
    Type: AWS::ApiGateway::UsagePlanKey
    Properties:
      KeyId: !Ref Key
      KeyType: API_KEY
      UsagePlanId: !Ref Plan
  Validator:
    Type: AWS::ApiGateway::RequestValidator
    Properties:
      RestApiId: !Ref Api
      ValidateRequestBody: true
  HttpApi:
    Type: AWS::ApiGatewayV2::Api
    Properties:
      Name: !Sub "${AWS::StackName}-http"
      ProtocolType: HTTP
      Target: !GetAtt Fn.Arn
  V2Integration:
    Type: AWS::ApiGatewayV2::Integration
    Properties:
      ApiId: !Ref HttpApi
      IntegrationType: AWS_PROXY
      IntegrationUri: !GetAtt Fn.Arn
      PayloadFormatVersion: "2.0"
  V2Route:
    Type: AWS::ApiGatewayV2::Route
    Properties:
      ApiId: !Ref HttpApi
      RouteKey: GET /items/{id}
      Target: !Sub "integrations/${V2Integration}"
Outputs:
  ApiId:
    Value: !Ref Api
  RootResourceId:
    Value: !GetAtt Api.RootResourceId
  StageName:
    Value: !Ref Stage
  KeyId:
    Value: !Ref Key
  PlanId:
    Value: !Ref Plan
  HttpApiId:
    Value: !Ref HttpApi
  HttpEndpoint:
    Value: !GetAtt HttpApi.ApiEndpoint
  RouteId:
    Value: !Ref V2Route
"""


def test_cloudformation_deploy_update_delete(cumulo, apigw, tmp_path):
    cfn = cumulo.client("cloudformation")
    v2 = cumulo.client("apigatewayv2")
    stack = f"apigw-{uid()}"
    template = tmp_path / "api.yaml"
    template.write_text(STACK)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template))
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    api_id = out["ApiId"]
    api = apigw.get_rest_api(restApiId=api_id)
    assert api["name"] == f"{stack}-rest" and api["rootResourceId"] == out["RootResourceId"]
    assert api["endpointConfiguration"]["types"] == ["REGIONAL"]
    assert api["tags"]["team"] == "a" and api["tags"]["aws:cloudformation:logical-id"] == "Api"
    assert apigw.get_stage(restApiId=api_id, stageName="prod")["variables"] == {"greeting": "hello"}
    assert [k["id"] for k in apigw.get_usage_plan_keys(usagePlanId=out["PlanId"])["items"]] == [out["KeyId"]]
    assert len(apigw.get_request_validators(restApiId=api_id)["items"]) == 1

    status, _, _, body = both_forms(cumulo, api_id, "prod", "/any/path")
    assert (status, json.loads(body)) == (200, {"greeting": "hello", "path": "/any/path"})
    status, _, _, body = both_forms(cumulo, api_id, "prod", "/")
    assert (status, json.loads(body)) == (200, {"mock": "hello"})
    http_id = out["HttpApiId"]
    assert out["HttpEndpoint"] == f"http://{http_id}.execute-api.localhost:{cumulo.port}"
    status, _, _, body = http(cumulo, "GET", f"/_aws/execute-api/{http_id}/items/3")
    assert (status, json.loads(body)) == (200, {"greeting": "hello", "path": "/items/3"})
    status, _, _, body = http(cumulo, "GET", "/whatever", host=f"{http_id}.execute-api.localhost:{cumulo.port}")
    assert (status, json.loads(body)) == (200, {"greeting": "hello", "path": "/whatever"})

    # An update flows to the function, the mock's template (a new Method definition) and the
    # stage variables; the API keeps its id.
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", "Greeting=bonjour")
    out2 = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    assert out2["ApiId"] == api_id
    assert apigw.get_stage(restApiId=api_id, stageName="prod")["variables"] == {"greeting": "bonjour"}
    status, _, _, body = both_forms(cumulo, api_id, "prod", "/x")
    assert json.loads(body)["greeting"] == "bonjour"
    method = apigw.get_method(restApiId=api_id, resourceId=out["RootResourceId"], httpMethod="GET")
    assert method["methodIntegration"]["integrationResponses"]["200"]["responseTemplates"] == {"application/json": '{"mock": "bonjour"}'}

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    for call, kw in [(apigw.get_rest_api, {"restApiId": api_id}), (apigw.get_api_key, {"apiKey": out["KeyId"]}),
                     (apigw.get_usage_plan, {"usagePlanId": out["PlanId"]}), (v2.get_api, {"ApiId": http_id})]:
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call(**kw)
        assert e.value.response["Error"]["Code"] == "NotFoundException"
    assert http(cumulo, "GET", f"/_aws/execute-api/{api_id}/prod/x")[0] == 403


def test_http_proxy_and_parameter_validation(apigw, cumulo):
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"path": self.path, "seen": self.headers.get("x-probe")}).encode()
            self.send_response(207)
            self.send_header("Content-Type", "application/json")
            self.send_header("x-backend", "local")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    backend = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    try:
        port = backend.server_address[1]
        api = apigw.create_rest_api(name=f"proxy-{uid()}")
        res = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="{proxy+}")
        v = apigw.create_request_validator(restApiId=api["id"], name="params", validateRequestParameters=True)
        apigw.put_method(restApiId=api["id"], resourceId=res["id"], httpMethod="GET", authorizationType="NONE",
                         requestValidatorId=v["id"], requestParameters={"method.request.querystring.q": True,
                                                                       "method.request.path.proxy": True})
        # Request parameters: the greedy path under another name, a header and a query parameter
        # from the method request and the stage.
        apigw.put_integration(restApiId=api["id"], resourceId=res["id"], httpMethod="GET", type="HTTP_PROXY",
                              integrationHttpMethod="GET", uri=f"http://127.0.0.1:{port}/backend/{{rest}}",
                              requestParameters={"integration.request.path.rest": "method.request.path.proxy",
                                                 "integration.request.header.x-probe": "method.request.querystring.q",
                                                 "integration.request.querystring.stage": "context.stage"})
        apigw.create_deployment(restApiId=api["id"], stageName="dev")
        status, headers, _, body = both_forms(cumulo, api["id"], "dev", "/a/b?q=1", headers={"x-probe": "p1"})
        assert (status, json.loads(body)) == (207, {"path": "/backend/a/b?q=1&stage=dev", "seen": "1"})
        assert headers["x-backend"] == "local"
        status, _, _, body = both_forms(cumulo, api["id"], "dev", "/a/b")
        assert (status, json.loads(body)) == (400, {"message": "Missing required request parameters: [q]"})

        v2 = cumulo.client("apigatewayv2")
        http_api = v2.create_api(Name=f"proxy-{uid()}", ProtocolType="HTTP")
        integ = v2.create_integration(ApiId=http_api["ApiId"], IntegrationType="HTTP_PROXY", IntegrationMethod="ANY",
                                      IntegrationUri=f"http://127.0.0.1:{port}/v2/{{rest}}", PayloadFormatVersion="1.0")
        v2.create_route(ApiId=http_api["ApiId"], RouteKey="GET /x/{rest+}", Target=f"integrations/{integ['IntegrationId']}")
        v2.create_stage(ApiId=http_api["ApiId"], StageName="$default", AutoDeploy=True)
        status, _, _, body = http(cumulo, "GET", f"/_aws/execute-api/{http_api['ApiId']}/x/deep/er?z=1")
        assert (status, json.loads(body)["path"]) == (207, "/v2/deep/er?z=1")
    finally:
        backend.shutdown()
