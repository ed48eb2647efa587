"""API Gateway HTTP APIs (v2) end to end: the control plane through boto3 and the AWS CLI and
the data plane answering real HTTP at both URL forms, backed by real cumulo Lambda functions
(payload format 2.0 and 1.0), with routes, JWT and Lambda authorizers and CORS."""
import base64
import json
import urllib.error
import urllib.request

import botocore.exceptions
import pytest
from conftest import CumuloServer
from test_apigateway import http, make_function, uid

ECHO = """
import json
def handler(event, context):
    q = event.get("queryStringParameters") or {}
    if q.get("plain"):
        return q["plain"]
    return {"statusCode": 200, "headers": {"x-echo": "yes"}, "cookies": ["c=1"], "body": json.dumps(event)}
"""

AUTH = """
def handler(event, context):
    return {"isAuthorized": event["headers"].get("authorization") == "let-me-in",
            "context": {"user": "u1"}}
"""


@pytest.fixture(scope="module")
def v2(cumulo):
    return cumulo.client("apigatewayv2")


@pytest.fixture(scope="module")
def lam(cumulo):
    return cumulo.client("lambda")


def both(cumulo, api_id, path, method="GET", headers=None, body=None):
    a = http(cumulo, method, f"/_aws/execute-api/{api_id}{path}", headers=headers, body=body)
    b = http(cumulo, method, path, host=f"{api_id}.execute-api.localhost:{cumulo.port}", headers=headers, body=body)
    assert a[0] == b[0]
    return a


def err(e):
    return e.value.response["Error"]["Code"], e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def jwt(claims):
    enc = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")
    return f"{enc({'alg': 'none'})}.{enc(claims)}.sig"


def test_quick_create_serves_payload_2(v2, lam, cumulo):
    fn = make_function(lam, ECHO)
    api = v2.create_api(Name=f"http-{uid()}", ProtocolType="HTTP", Target=fn)
    assert len(api["ApiId"]) == 10 and api["ApiEndpoint"].endswith(f"{api['ApiId']}.execute-api.localhost:{cumulo.port}")
    routes = v2.get_routes(ApiId=api["ApiId"])["Items"]
    assert [r["RouteKey"] for r in routes] == ["$default"]
    integ = v2.get_integrations(ApiId=api["ApiId"])["Items"][0]
    assert (integ["IntegrationType"], integ["PayloadFormatVersion"]) == ("AWS_PROXY", "2.0")
    stage = v2.get_stage(ApiId=api["ApiId"], StageName="$default")
    assert stage["AutoDeploy"] is True and stage["DeploymentId"]

    status, headers, cookies, body = both(cumulo, api["ApiId"], "/some/path?a=1&a=2&b=x", method="POST",
                                          headers={"Content-Type": "text/plain", "Cookie": "k=v"}, body=b"hello")
    assert status == 200 and headers["x-echo"] == "yes" and cookies == ["c=1"]
    event = json.loads(body)
    assert event["version"] == "2.0" and event["routeKey"] == "$default"
    assert event["rawPath"] == "/some/path" and event["rawQueryString"] == "a=1&a=2&b=x"
    assert event["queryStringParameters"] == {"a": "1,2", "b": "x"}
    assert event["cookies"] == ["k=v"] and event["body"] == "hello" and event["isBase64Encoded"] is False
    assert event["headers"]["content-type"] == "text/plain"
    ctx = event["requestContext"]
    assert (ctx["apiId"], ctx["stage"], ctx["http"]["method"], ctx["http"]["path"]) == (api["ApiId"], "$default", "POST", "/some/path")
    # A plain string result is a 200 application/json answer.
    status, headers, _, body = both(cumulo, api["ApiId"], "/x?plain=hi")
    assert (status, body, headers["content-type"]) == (200, b"hi", "application/json")


def test_routes_stages_authorizers_cors(v2, lam, cumulo):
    fn = make_function(lam, ECHO)
    auth_fn = make_function(lam, AUTH)
    api = v2.create_api(Name=f"http-{uid()}", ProtocolType="HTTP",
                        CorsConfiguration={"AllowOrigins": ["https://app.example"], "AllowMethods": ["GET", "POST"],
                                           "AllowHeaders": ["content-type"], "MaxAge": 300})
    aid = api["ApiId"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        v2.get_api(ApiId="nope")
    assert err(e) == ("NotFoundException", 404)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        v2.create_integration(ApiId=aid, IntegrationType="AWS_PROXY", IntegrationUri=fn)
    assert err(e) == ("BadRequestException", 400)
    i2 = v2.create_integration(ApiId=aid, IntegrationType="AWS_PROXY", IntegrationUri=fn, PayloadFormatVersion="2.0")
    i1 = v2.create_integration(ApiId=aid, IntegrationType="AWS_PROXY", IntegrationUri=fn, PayloadFormatVersion="1.0")
    v2.create_route(ApiId=aid, RouteKey="GET /items/{id}", Target=f"integrations/{i2['IntegrationId']}")
    v2.create_route(ApiId=aid, RouteKey="ANY /v1/{proxy+}", Target=f"integrations/{i1['IntegrationId']}")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        v2.create_route(ApiId=aid, RouteKey="GET /items/{id}", Target=f"integrations/{i2['IntegrationId']}")
    assert err(e) == ("ConflictException", 409)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        v2.create_route(ApiId=aid, RouteKey="GET /x", Target="integrations/nope")
    assert err(e) == ("BadRequestException", 400)
    assert len(v2.get_routes(ApiId=aid)["Items"]) == 2
    jwt_auth = v2.create_authorizer(ApiId=aid, AuthorizerType="JWT", Name="jwt",
                                    IdentitySource=["$request.header.Authorization"],
                                    JwtConfiguration={"Issuer": "https://issuer.example", "Audience": ["aud1"]})
    lam_auth = v2.create_authorizer(ApiId=aid, AuthorizerType="REQUEST", Name="lam",
                                    AuthorizerUri=f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{auth_fn}/invocations",
                                    AuthorizerPayloadFormatVersion="2.0", EnableSimpleResponses=True,
                                    IdentitySource=["$request.header.Authorization"])
    v2.create_route(ApiId=aid, RouteKey="GET /jwt", Target=f"integrations/{i2['IntegrationId']}",
                    AuthorizationType="JWT", AuthorizerId=jwt_auth["AuthorizerId"])
    v2.create_route(ApiId=aid, RouteKey="GET /lam", Target=f"integrations/{i2['IntegrationId']}",
                    AuthorizationType="CUSTOM", AuthorizerId=lam_auth["AuthorizerId"])

    # Nothing deployed yet: no stage answers.
    assert both(cumulo, aid, "/dev/items/1")[0] == 404
    dep = v2.create_stage(ApiId=aid, StageName="dev", AutoDeploy=True, StageVariables={"sv": "1"})
    assert dep["DeploymentId"]

    status, _, _, body = both(cumulo, aid, "/dev/items/7")
    event = json.loads(body)
    assert status == 200 and event["pathParameters"] == {"id": "7"} and event["routeKey"] == "GET /items/{id}"
    assert event["stageVariables"] == {"sv": "1"} and event["requestContext"]["stage"] == "dev"
    status, _, _, body = both(cumulo, aid, "/dev/v1/a/b", method="DELETE")
    event = json.loads(body)
    assert status == 200 and event["version"] == "1.0" and event["pathParameters"] == {"proxy": "a/b"}
    assert event["httpMethod"] == "DELETE" and event["path"] == "/dev/v1/a/b"
    status, _, _, body = both(cumulo, aid, "/dev/nothing/here")
    assert (status, json.loads(body)) == (404, {"message": "Not Found"})

    assert both(cumulo, aid, "/dev/jwt")[0] == 401
    good = jwt({"iss": "https://issuer.example", "aud": "aud1", "sub": "s1", "exp": 4102444800})
    status, _, _, body = both(cumulo, aid, "/dev/jwt", headers={"Authorization": f"Bearer {good}"})
    assert status == 200
    assert json.loads(body)["requestContext"]["authorizer"]["jwt"]["claims"]["sub"] == "s1"
    bad = jwt({"iss": "https://other.example", "aud": "aud1"})
    assert both(cumulo, aid, "/dev/jwt", headers={"Authorization": bad})[0] == 401
    assert both(cumulo, aid, "/dev/lam", headers={"Authorization": "nope"})[0] == 403
    status, _, _, body = both(cumulo, aid, "/dev/lam", headers={"Authorization": "let-me-in"})
    assert status == 200 and json.loads(body)["requestContext"]["authorizer"]["lambda"] == {"user": "u1"}

    # CORS: the preflight is answered by API Gateway; responses carry the allowed origin.
    status, headers, _, _ = both(cumulo, aid, "/dev/items/1", method="OPTIONS",
                                 headers={"Origin": "https://app.example", "Access-Control-Request-Method": "GET"})
    assert status == 204 and headers["access-control-allow-origin"] == "https://app.example"
    assert headers["access-control-allow-methods"] == "GET,POST" and headers["access-control-max-age"] == "300"
    status, headers, _, _ = both(cumulo, aid, "/dev/items/1", headers={"Origin": "https://app.example"})
    assert headers["access-control-allow-origin"] == "https://app.example"

    # A route change auto-deploys.
    before = v2.get_stage(ApiId=aid, StageName="dev")["DeploymentId"]
    v2.create_route(ApiId=aid, RouteKey="GET /new", Target=f"integrations/{i2['IntegrationId']}")
    assert v2.get_stage(ApiId=aid, StageName="dev")["DeploymentId"] != before
    assert both(cumulo, aid, "/dev/new")[0] == 200

    arn = f"arn:aws:apigateway:us-east-1::/apis/{aid}"
    v2.tag_resource(ResourceArn=arn, Tags={"a": "1"})
    assert v2.get_tags(ResourceArn=arn)["Tags"] == {"a": "1"}
    v2.delete_api(ApiId=aid)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        v2.get_api(ApiId=aid)
    assert err(e) == ("NotFoundException", 404)


def test_domains_mappings_websocket_cli_and_restart(tmp_path):
    server = CumuloServer(data_dir=tmp_path).start()
    try:
        api = server.aws("apigatewayv2", "create-api", "--name", "durable", "--protocol-type", "HTTP")
        c = server.client("apigatewayv2")
        c.create_stage(ApiId=api["ApiId"], StageName="prod")
        dom = c.create_domain_name(DomainName="api.example.com", DomainNameConfigurations=[
            {"CertificateArn": "arn:aws:acm:us-east-1:000000000000:certificate/x", "EndpointType": "REGIONAL"}])
        assert dom["DomainNameConfigurations"][0]["DomainNameStatus"] == "AVAILABLE"
        m = c.create_api_mapping(DomainName="api.example.com", ApiId=api["ApiId"], Stage="prod", ApiMappingKey="v1")
        # API mappings are one of the child collections (with route and integration responses):
        # a taken key, an unknown stage, API or domain, and a missing mapping answer as AWS does.
        with pytest.raises(c.exceptions.ConflictException) as e:
            c.create_api_mapping(DomainName="api.example.com", ApiId=api["ApiId"], Stage="prod", ApiMappingKey="v1")
        assert e.value.response["Error"]["Message"] == "ApiMapping key already exists for this domain name"
        with pytest.raises(c.exceptions.BadRequestException) as e:
            c.create_api_mapping(DomainName="api.example.com", ApiId=api["ApiId"], Stage="nope")
        assert e.value.response["Error"]["Message"] == "Invalid stage identifier specified nope"
        with pytest.raises(c.exceptions.NotFoundException):
            c.create_api_mapping(DomainName="api.example.com", ApiId="nosuchapi", Stage="prod")
        with pytest.raises(c.exceptions.NotFoundException):
            c.create_api_mapping(DomainName="other.example.com", ApiId=api["ApiId"], Stage="prod")
        root = c.create_api_mapping(DomainName="api.example.com", ApiId=api["ApiId"], Stage="prod")
        assert root["ApiMappingKey"] == ""
        assert c.update_api_mapping(DomainName="api.example.com", ApiMappingId=root["ApiMappingId"], ApiId=api["ApiId"],
                                    ApiMappingKey="v2")["ApiMappingKey"] == "v2"
        c.delete_api_mapping(DomainName="api.example.com", ApiMappingId=root["ApiMappingId"])
        with pytest.raises(c.exceptions.NotFoundException) as e:
            c.get_api_mapping(DomainName="api.example.com", ApiMappingId=root["ApiMappingId"])
        assert e.value.response["Error"]["Message"] == f"Invalid ApiMapping identifier specified {root['ApiMappingId']}"
        assert [x["ApiMappingId"] for x in c.get_api_mappings(DomainName="api.example.com")["Items"]] == [m["ApiMappingId"]]
        assert "ApiMappings" not in c.get_domain_name(DomainName="api.example.com")
        ws = c.create_api(Name="ws", ProtocolType="WEBSOCKET", RouteSelectionExpression="$request.body.action")
        c.create_route(ApiId=ws["ApiId"], RouteKey="$connect")
        server.stop()
        server.start()
        c = server.client("apigatewayv2")
        assert c.get_api(ApiId=api["ApiId"])["Name"] == "durable"
        assert c.get_api_mapping(DomainName="api.example.com", ApiMappingId=m["ApiMappingId"])["ApiMappingKey"] == "v1"
        assert [r["RouteKey"] for r in c.get_routes(ApiId=ws["ApiId"])["Items"]] == ["$connect"]
        assert {a["Name"] for a in server.aws("apigatewayv2", "get-apis")["Items"]} == {"durable", "ws"}
    finally:
        server.stop()


BODY_STACK = """
AWSTemplateFormatVersion: '2010-09-09'
Resources:
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.11
      Handler: index.handler
      Role: arn:aws:iam::000000000000:role/lambda-role
      Code:
        ZipFile: |
          def handler(event, context):
              return {"statusCode": 200, "body": event.get("rawPath") or event.get("path")}
  RestFromBody:
    Type: AWS::ApiGateway::RestApi
    Properties:
      Body:
        swagger: "2.0"
        info: {title: from-body}
        paths:
          /hello:
            get:
              x-amazon-apigateway-integration:
                type: aws_proxy
                httpMethod: POST
                uri: !Sub "arn:aws:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/${Fn.Arn}/invocations"
  RestDeployment:
    Type: AWS::ApiGateway::Deployment
    Properties:
      RestApiId: !Ref RestFromBody
      StageName: Stage
  RestStage:
    Type: AWS::ApiGateway::Stage
    Properties:
      RestApiId: !Ref RestFromBody
      DeploymentId: !Ref RestDeployment
      StageName: Prod
  HttpFromBody:
    Type: AWS::ApiGatewayV2::Api
    Properties:
      Body:
        openapi: "3.0.1"
        info: {title: http-from-body}
        paths:
          $default:
            x-amazon-apigateway-any-method:
              x-amazon-apigateway-integration:
                type: aws_proxy
                httpMethod: POST
                payloadFormatVersion: "2.0"
                uri: !GetAtt Fn.Arn
  HttpStage:
    Type: AWS::ApiGatewayV2::Stage
    Properties:
      ApiId: !Ref HttpFromBody
      StageName: $default
      AutoDeploy: true
Outputs:
  RestId:
    Value: !Ref RestFromBody
  HttpId:
    Value: !Ref HttpFromBody
"""


def test_apis_from_openapi_bodies_deploy_and_answer(cumulo, tmp_path):
    cfn = cumulo.client("cloudformation")
    stack = f"bodies-{uid()}"
    template = tmp_path / "bodies.yaml"
    template.write_text(BODY_STACK)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template))
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    assert cumulo.client("apigateway").get_rest_api(restApiId=out["RestId"])["name"] == "from-body"
    status, _, _, body = http(cumulo, "GET", f"/_aws/execute-api/{out['RestId']}/Prod/hello")
    assert (status, body) == (200, b"/hello")
    status, _, _, body = http(cumulo, "GET", f"/_aws/execute-api/{out['RestId']}/Stage/hello")
    assert (status, body) == (200, b"/hello")
    status, _, _, body = http(cumulo, "GET", "/any/where", host=f"{out['HttpId']}.execute-api.localhost:{cumulo.port}")
    assert (status, body) == (200, b"/any/where")
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    assert http(cumulo, "GET", f"/_aws/execute-api/{out['HttpId']}/x")[0] == 403


def test_import_api_brings_security_schemes_onto_routes(v2, lam, cumulo):
    """ImportApi reads an OpenAPI definition's `components.securitySchemes` (a `jwt` and a
    `request` x-amazon-apigateway-authorizer, an `awsSigv4` scheme) into authorizers and each
    operation's `security` onto its route; the JWT route then refuses a request without a
    token. ReimportApi replaces the definition's authorizers and keeps one created apart."""
    fn = make_function(lam, ECHO)
    auth_fn = make_function(lam, AUTH)
    uri = lambda arn: f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{arn}/invocations"
    integration = {"type": "aws_proxy", "httpMethod": "POST", "payloadFormatVersion": "2.0", "uri": uri(fn)}
    spec = {
        "openapi": "3.0.1", "info": {"title": f"secured-{uid()}", "version": "1"},
        "components": {"securitySchemes": {
            "Jwt": {"type": "oauth2", "x-amazon-apigateway-authorizer": {
                "type": "jwt", "identitySource": "$request.header.Authorization",
                "jwtConfiguration": {"issuer": "https://issuer.example", "audience": ["app"]}}},
            "Fn": {"type": "apiKey", "name": "Unused", "in": "header", "x-amazon-apigateway-authorizer": {
                "type": "request", "authorizerUri": uri(auth_fn), "authorizerPayloadFormatVersion": "2.0",
                "enableSimpleResponses": True, "identitySource": ["$request.header.Authorization"],
                "authorizerResultTtlInSeconds": 0}},
            "Iam": {"type": "apiKey", "name": "Authorization", "in": "header",
                    "x-amazon-apigateway-authtype": "awsSigv4"}}},
        "paths": {
            "/jwt": {"get": {"x-amazon-apigateway-integration": integration, "security": [{"Jwt": ["read"]}]}},
            "/fn": {"get": {"x-amazon-apigateway-integration": integration, "security": [{"Fn": []}]}},
            "/iam": {"get": {"x-amazon-apigateway-integration": integration, "security": [{"Iam": []}]}},
            "/open": {"get": {"x-amazon-apigateway-integration": integration}},
        },
    }
    aid = v2.import_api(Body=json.dumps(spec))["ApiId"]
    authorizers = {a["Name"]: a for a in v2.get_authorizers(ApiId=aid)["Items"]}
    assert sorted(authorizers) == ["Fn", "Jwt"]
    assert authorizers["Jwt"]["AuthorizerType"] == "JWT"
    assert authorizers["Jwt"]["IdentitySource"] == ["$request.header.Authorization"]
    assert authorizers["Fn"]["AuthorizerType"] == "REQUEST"
    assert authorizers["Fn"]["EnableSimpleResponses"] is True
    routes = {r["RouteKey"]: r for r in v2.get_routes(ApiId=aid)["Items"]}
    assert (routes["GET /jwt"]["AuthorizationType"], routes["GET /jwt"]["AuthorizerId"],
            routes["GET /jwt"]["AuthorizationScopes"]) == ("JWT", authorizers["Jwt"]["AuthorizerId"], ["read"])
    assert routes["GET /fn"]["AuthorizationType"] == "CUSTOM"
    assert routes["GET /iam"]["AuthorizationType"] == "AWS_IAM"
    assert routes["GET /open"]["AuthorizationType"] == "NONE"
    v2.create_stage(ApiId=aid, StageName="$default", AutoDeploy=True)
    assert both(cumulo, aid, "/jwt")[0] == 401
    token = lambda **claims: {"Authorization": jwt({"iss": "https://issuer.example", "aud": "app", **claims})}
    assert both(cumulo, aid, "/jwt", headers=token(scope="read write"))[0] == 200
    assert both(cumulo, aid, "/jwt", headers=token(scp=["read"]))[0] == 200
    # A valid token without one of the route's scopes is forbidden.
    assert both(cumulo, aid, "/jwt", headers=token(scope="write"))[0] == 403
    assert both(cumulo, aid, "/jwt", headers=token())[0] == 403
    assert both(cumulo, aid, "/fn", headers={"Authorization": "nope"})[0] == 403
    assert both(cumulo, aid, "/fn", headers={"Authorization": "let-me-in"})[0] == 200
    apart = v2.create_authorizer(ApiId=aid, Name="Apart", AuthorizerType="REQUEST", AuthorizerUri=uri(auth_fn),
                                 AuthorizerPayloadFormatVersion="2.0", IdentitySource=["$request.header.X"])
    v2.reimport_api(ApiId=aid, Body=json.dumps(spec))
    names = sorted(a["Name"] for a in v2.get_authorizers(ApiId=aid)["Items"])
    assert names == ["Apart", "Fn", "Jwt"]
    assert apart["AuthorizerId"] in [a["AuthorizerId"] for a in v2.get_authorizers(ApiId=aid)["Items"]]
    v2.delete_api(ApiId=aid)
