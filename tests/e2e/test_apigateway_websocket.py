"""API Gateway WebSocket APIs end to end: real WebSocket clients (websocket-client) on both
data-plane URL forms, a Node.js Lambda answering through the @connections API with the AWS SDK
v3 (PostToConnection from the function), route selection, $default, $disconnect, a REQUEST
authorizer on $connect, GoneException, HTTP_PROXY and the non-proxy HTTP/AWS/MOCK integrations (a
local http.server as the HTTP target), and stacks deployed with `aws cloudformation deploy`."""
import http.server
import json
import pathlib
import tempfile
import threading
import time
import urllib.parse

import botocore.config
import botocore.exceptions
import boto3
import pytest
import websocket
from conftest import CumuloServer
from test_apigateway import ROLE, lambda_uri, uid, zip_of

# The SDK v3 client the functions require, installed on first use into a cache kept across runs.
SDK_CACHE = pathlib.Path.home() / ".cache" / "cumulo-e2e-node-sdk"

HANDLER = """
const { ApiGatewayManagementApiClient, PostToConnectionCommand } = require('@aws-sdk/client-apigatewaymanagementapi');
exports.handler = async (event) => {
  const ctx = event.requestContext;
  console.log('EVENT ' + ctx.eventType + ' ' + ctx.connectionId + ' ' + JSON.stringify(event));
  if (ctx.eventType === 'CONNECT') {
    const q = event.queryStringParameters || {};
    if (q.refuse) return { statusCode: 400, body: 'refused' };
    // AWS's subprotocol example: the answer's headers reach the 101.
    return q.proto ? { statusCode: 200, headers: { 'Sec-WebSocket-Protocol': q.proto } } : { statusCode: 200 };
  }
  if (ctx.eventType === 'DISCONNECT') return { statusCode: 200 };
  if (ctx.routeKey === 'boom') throw new Error('boom');
  if (ctx.routeKey === 'twoway' || ctx.routeKey === 'halfway') return { statusCode: 200, body: 'two-way:' + event.body };
  // AWS's sample code: the callback URL from the event's domain name and stage.
  const client = new ApiGatewayManagementApiClient({ endpoint: `https://${ctx.domainName}/${ctx.stage}` });
  await client.send(new PostToConnectionCommand({ ConnectionId: ctx.connectionId, Data: JSON.stringify({
    route: ctx.routeKey, eventType: ctx.eventType, body: event.body, messageId: ctx.messageId,
    apiId: ctx.apiId, stage: ctx.stage, connectedAt: ctx.connectedAt, requestId: ctx.requestId,
    authorizer: ctx.authorizer || null }) }));
  return { statusCode: 200 };
};
"""

AUTHORIZER = """
exports.handler = async (event) => ({
  principalId: 'user-1',
  policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke',
    Effect: event.headers.Auth === 'let-me-in' ? 'Allow' : 'Deny', Resource: event.methodArn }] },
  context: { tier: 'gold' },
});
"""


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory() as d:
        s = CumuloServer(data_dir=pathlib.Path(d) / "data", env={"CUMULO_NODE_SDK_DIR": str(SDK_CACHE)}).start()
        yield s
        s.stop()


@pytest.fixture(scope="module")
def lam(server):
    return server.client("lambda", read_timeout=300)


@pytest.fixture(scope="module")
def v2(server):
    return server.client("apigatewayv2")


def node_function(lam, source):
    name = f"ws-{uid()}"
    lam.create_function(FunctionName=name, Runtime="nodejs20.x", Role=ROLE, Handler="index.handler",
                        Code={"ZipFile": zip_of({"index.js": source})}, Timeout=300)
    lam.get_waiter("function_active_v2").wait(FunctionName=name)
    return lam.get_function(FunctionName=name)["Configuration"]["FunctionArn"]


@pytest.fixture(scope="module")
def handler(lam):
    return node_function(lam, HANDLER)


def make_api(v2, fn, stage="prod", authorizer_fn=None):
    api = v2.create_api(Name=f"ws-{uid()}", ProtocolType="WEBSOCKET", RouteSelectionExpression="$request.body.action")
    api_id = api["ApiId"]
    integ = v2.create_integration(ApiId=api_id, IntegrationType="AWS_PROXY", IntegrationUri=lambda_uri(fn))
    target = f"integrations/{integ['IntegrationId']}"
    connect = {}
    if authorizer_fn:
        auth = v2.create_authorizer(ApiId=api_id, Name="gate", AuthorizerType="REQUEST",
                                    AuthorizerUri=lambda_uri(authorizer_fn),
                                    IdentitySource=["route.request.header.Auth"])
        connect = {"AuthorizationType": "CUSTOM", "AuthorizerId": auth["AuthorizerId"]}
    v2.create_route(ApiId=api_id, RouteKey="$connect", Target=target, **connect)
    for key in ["$disconnect", "$default", "echo", "boom"]:
        v2.create_route(ApiId=api_id, RouteKey=key, Target=target)
    two = v2.create_route(ApiId=api_id, RouteKey="twoway", Target=target, RouteResponseSelectionExpression="$default")
    v2.create_route_response(ApiId=api_id, RouteId=two["RouteId"], RouteResponseKey="$default")
    # A response selection expression without a route response is still one-way.
    v2.create_route(ApiId=api_id, RouteKey="halfway", Target=target, RouteResponseSelectionExpression="$default")
    v2.create_route(ApiId=api_id, RouteKey="nowhere")
    dep = v2.create_deployment(ApiId=api_id)
    v2.create_stage(ApiId=api_id, StageName=stage, DeploymentId=dep["DeploymentId"])
    return api_id


def ws_url(server, api_id, stage="prod"):
    return f"ws://127.0.0.1:{server.port}/_aws/execute-api/{api_id}/{stage}"


def connect(url, **kw):
    # Generous: on a fresh machine the first function's require() installs the SDK client.
    return websocket.create_connection(url, timeout=300, **kw)


def management(server, api_id, stage="prod"):
    return boto3.client("apigatewaymanagementapi", region_name="us-east-1",
                        endpoint_url=f"{server.endpoint}/_aws/execute-api/{api_id}/{stage}",
                        aws_access_key_id="test", aws_secret_access_key="test",
                        config=botocore.config.Config(retries={"max_attempts": 1}))


def logged(server, fn, needle, timeout=20):
    """The function's log lines containing `needle` (waits for them)."""
    logs = server.client("logs")
    group = "/aws/lambda/" + fn.split(":")[-1]
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            events = logs.filter_log_events(logGroupName=group)["events"]
        except logs.exceptions.ResourceNotFoundException:
            events = []
        lines = [e["message"] for e in events if needle in e["message"]]
        if lines:
            return lines
        time.sleep(0.2)
    return []


def connection_ids(server, fn):
    """The connection ids of the CONNECT events the function logged, oldest first."""
    return [line.split("EVENT CONNECT ", 1)[1].split()[0] for line in logged(server, fn, "EVENT CONNECT ")]


def test_routes_echo_default_errors_and_disconnect(server, v2, handler):
    api_id = make_api(v2, handler)
    ws = connect(ws_url(server, api_id), header=["User-Agent: ws-test/1"])
    try:
        # A routed message: the function answers through PostToConnection.
        ws.send(json.dumps({"action": "echo", "n": 1}))
        got = json.loads(ws.recv())
        assert (got["route"], got["eventType"], got["apiId"], got["stage"]) == ("echo", "MESSAGE", api_id, "prod")
        assert json.loads(got["body"]) == {"action": "echo", "n": 1} and got["messageId"]
        connection_id = connection_ids(server, handler)[-1]
        # Not JSON, and an action no route has: $default.
        ws.send("plain text")
        assert json.loads(ws.recv())["route"] == "$default"
        ws.send(json.dumps({"action": "unknown"}))
        assert json.loads(ws.recv())["route"] == "$default"
        # A failing function, and a route without an integration: AWS's error frame.
        ws.send(json.dumps({"action": "boom"}))
        frame = json.loads(ws.recv())
        assert frame["message"] == "Internal server error" and frame["connectionId"] == connection_id
        assert frame["requestId"]
        ws.send(json.dumps({"action": "nowhere"}))
        assert json.loads(ws.recv())["message"] == "Internal server error"
        # A two-way route sends the function's body back.
        ws.send(json.dumps({"action": "halfway"}))
        ws.send(json.dumps({"action": "twoway"}))
        assert ws.recv() == 'two-way:{"action": "twoway"}'
        # The management API sees the connection.
        mgmt = management(server, api_id)
        info = mgmt.get_connection(ConnectionId=connection_id)
        assert info["Identity"] == {"SourceIp": "127.0.0.1", "UserAgent": "ws-test/1"}
        assert info["ConnectedAt"] <= info["LastActiveAt"]
        mgmt.post_to_connection(ConnectionId=connection_id, Data=b"from outside")
        assert ws.recv() == "from outside"
    finally:
        ws.close()
    # $disconnect ran with the connection's id; the connection is gone.
    assert logged(server, handler, f"EVENT DISCONNECT {connection_id}")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        management(server, api_id).post_to_connection(ConnectionId=connection_id, Data=b"x")
    assert (e.value.response["Error"]["Code"], e.value.response["ResponseMetadata"]["HTTPStatusCode"]) == ("GoneException", 410)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        management(server, api_id).get_connection(ConnectionId="nope")
    assert e.value.response["Error"]["Code"] == "GoneException"


def test_host_form_and_delete_connection(server, v2, handler):
    api_id = make_api(v2, handler, stage="dev")
    host = f"{api_id}.execute-api.localhost:{server.port}"
    ws = connect(f"ws://127.0.0.1:{server.port}/dev", host=host)
    ws.send(json.dumps({"action": "echo"}))
    got = json.loads(ws.recv())
    assert got["route"] == "echo"
    ids = connection_ids(server, handler)
    # The host form of the management endpoint (`https://{api-id}.execute-api.{region}.amazonaws.com/{stage}`
    # on AWS): this test's resolver does not know `*.localhost`, so it sends the Host header itself.
    def get(connection_id):
        return server.raw("GET", f"/dev/@connections/{urllib.parse.quote(connection_id)}", headers=[("Host", host)])
    mine = [i for i in ids if get(i).status == 200]
    assert len(mine) == 1
    assert json.loads(get(mine[0]).body)["identity"]["sourceIp"] == "127.0.0.1"
    gone = get("nope")
    assert gone.status == 410 and gone.headers["x-amzn-errortype"].startswith("GoneException")
    mgmt = management(server, api_id, "dev")
    # Another stage does not reach this connection.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        management(server, api_id, "prod").get_connection(ConnectionId=mine[0])
    assert e.value.response["Error"]["Code"] == "GoneException"
    mgmt.delete_connection(ConnectionId=mine[0])
    # The server closes the socket (a normal close frame).
    opcode, data = ws.recv_data(control_frame=True)
    assert opcode == websocket.ABNF.OPCODE_CLOSE and int.from_bytes(data[:2], "big") == 1000
    ws.close()
    assert logged(server, handler, f"EVENT DISCONNECT {mine[0]}")


def test_refusals(server, v2, handler, lam):
    api_id = make_api(v2, handler)
    # $connect's integration answers 400: the upgrade is refused with it.
    with pytest.raises(websocket.WebSocketBadStatusException) as e:
        connect(ws_url(server, api_id) + "?refuse=1")
    assert e.value.status_code == 400
    # An unknown stage or API.
    for url in (ws_url(server, api_id, "nostage"), ws_url(server, "nosuchapi0", "prod")):
        with pytest.raises(websocket.WebSocketBadStatusException) as e:
            connect(url)
        assert e.value.status_code == 403
    # A REQUEST authorizer on $connect: no identity source 401, denied 403, allowed connects and
    # its context reaches the routes' events.
    gated = make_api(v2, handler, authorizer_fn=node_function(lam, AUTHORIZER))
    with pytest.raises(websocket.WebSocketBadStatusException) as e:
        connect(ws_url(server, gated))
    assert e.value.status_code == 401
    with pytest.raises(websocket.WebSocketBadStatusException) as e:
        connect(ws_url(server, gated), header=["Auth: wrong"])
    assert e.value.status_code == 403
    ws = connect(ws_url(server, gated), header=["Auth: let-me-in"])
    try:
        ws.send(json.dumps({"action": "echo"}))
        got = json.loads(ws.recv())
        assert got["authorizer"]["principalId"] == "user-1" and got["authorizer"]["tier"] == "gold"
    finally:
        ws.close()
    # An API whose execute-api endpoint is disabled refuses connections.
    v2.update_api(ApiId=api_id, DisableExecuteApiEndpoint=True)
    with pytest.raises(websocket.WebSocketBadStatusException) as e:
        connect(ws_url(server, api_id))
    assert e.value.status_code == 403
    v2.update_api(ApiId=api_id, DisableExecuteApiEndpoint=False)
    # Plain HTTP to a WebSocket stage is not served.
    status = server.raw("GET", f"/_aws/execute-api/{api_id}/prod").status
    assert status == 403


def test_route_responses_control_plane(v2):
    api_id = v2.create_api(Name=f"ws-{uid()}", ProtocolType="WEBSOCKET", RouteSelectionExpression="$request.body.action")["ApiId"]
    route = v2.create_route(ApiId=api_id, RouteKey="$default", RouteResponseSelectionExpression="$default")
    rr = v2.create_route_response(ApiId=api_id, RouteId=route["RouteId"], RouteResponseKey="$default")
    assert rr["RouteResponseKey"] == "$default" and rr["RouteResponseId"]
    with pytest.raises(v2.exceptions.ConflictException):
        v2.create_route_response(ApiId=api_id, RouteId=route["RouteId"], RouteResponseKey="$default")
    with pytest.raises(v2.exceptions.BadRequestException):
        v2.create_route_response(ApiId=api_id, RouteId=route["RouteId"], RouteResponseKey="")
    items = v2.get_route_responses(ApiId=api_id, RouteId=route["RouteId"])["Items"]
    assert [i["RouteResponseId"] for i in items] == [rr["RouteResponseId"]]
    # The route itself does not carry its responses.
    assert "RouteResponses" not in v2.get_route(ApiId=api_id, RouteId=route["RouteId"])
    updated = v2.update_route_response(ApiId=api_id, RouteId=route["RouteId"], RouteResponseId=rr["RouteResponseId"],
                                       ModelSelectionExpression="$request.body.m")
    assert updated["ModelSelectionExpression"] == "$request.body.m"
    v2.delete_route_response(ApiId=api_id, RouteId=route["RouteId"], RouteResponseId=rr["RouteResponseId"])
    with pytest.raises(v2.exceptions.NotFoundException) as e:
        v2.get_route_response(ApiId=api_id, RouteId=route["RouteId"], RouteResponseId=rr["RouteResponseId"])
    assert e.value.response["Error"]["Message"] == f"Invalid RouteResponse identifier specified {rr['RouteResponseId']}"
    assert v2.get_route_responses(ApiId=api_id, RouteId=route["RouteId"])["Items"] == []


def test_subprotocol_mock_forbidden_frame_and_size_limit(server, v2, handler):
    ws = connect(ws_url(server, make_api(v2, handler)) + "?proto=myprotocol", subprotocols=["myprotocol"])
    assert ws.getsubprotocol() == "myprotocol"
    ws.close()
    # A MOCK $connect accepts; without a $default route an unmatched frame is AWS's Forbidden.
    api_id = v2.create_api(Name=f"ws-{uid()}", ProtocolType="WEBSOCKET", RouteSelectionExpression="${request.body.action}")["ApiId"]
    mock = v2.create_integration(ApiId=api_id, IntegrationType="MOCK",
                                 RequestTemplates={"200": '{"statusCode": 200}'})
    v2.create_route(ApiId=api_id, RouteKey="$connect", Target=f"integrations/{mock['IntegrationId']}")
    # A two-way MOCK route: the request template's statusCode picks the integration response whose
    # template answers.
    echo = v2.create_integration(ApiId=api_id, IntegrationType="MOCK", TemplateSelectionExpression="\\$default",
                                 RequestTemplates={"$default": '{"statusCode": $input.json(\'$.code\')}'})
    for key, template in [("$default", "fine $input.path('$.code')"), ("/4\\d\\d/", "denied $context.routeKey")]:
        v2.create_integration_response(ApiId=api_id, IntegrationId=echo["IntegrationId"], IntegrationResponseKey=key,
                                       ResponseTemplates={"$default": template}, TemplateSelectionExpression="\\$default")
    route = v2.create_route(ApiId=api_id, RouteKey="mock", Target=f"integrations/{echo['IntegrationId']}",
                            RouteResponseSelectionExpression="$default")
    v2.create_route_response(ApiId=api_id, RouteId=route["RouteId"], RouteResponseKey="$default")
    assert "IntegrationResponses" not in v2.get_integration(ApiId=api_id, IntegrationId=echo["IntegrationId"])
    assert len(v2.get_integration_responses(ApiId=api_id, IntegrationId=echo["IntegrationId"])["Items"]) == 2
    v2.create_stage(ApiId=api_id, StageName="prod", AutoDeploy=True)
    ws = connect(ws_url(server, api_id))
    try:
        ws.send(json.dumps({"action": "mock", "code": 200}))
        assert ws.recv() == "fine 200"
        ws.send(json.dumps({"action": "mock", "code": 403}))
        assert ws.recv() == "denied mock"
        ws.send(json.dumps({"action": "missing"}))
        frame = json.loads(ws.recv())
        assert frame["message"] == "Forbidden" and frame["connectionId"] and frame["requestId"]
        mgmt = management(server, api_id)
        with pytest.raises(botocore.exceptions.ClientError) as e:
            mgmt.post_to_connection(ConnectionId=frame["connectionId"], Data=b"x" * (128 * 1024 + 1))
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 413
        mgmt.post_to_connection(ConnectionId=frame["connectionId"], Data=b"still here")
        assert ws.recv() == "still here"
        # A binary frame: AWS disconnects the client with 1003.
        ws.send_binary(b"\x00\x01")
        opcode, data = ws.recv_data(control_frame=True)
        assert opcode == websocket.ABNF.OPCODE_CLOSE and int.from_bytes(data[:2], "big") == 1003
    finally:
        ws.close()
    # A message over 128 KB: closed with 1009.
    ws = connect(ws_url(server, api_id))
    try:
        ws.send("x" * (128 * 1024 + 1))
        opcode, data = ws.recv_data(control_frame=True)
        assert opcode == websocket.ABNF.OPCODE_CLOSE and int.from_bytes(data[:2], "big") == 1009
    finally:
        ws.close()


class Backend:
    """A local HTTP target: records every request, answers by path (a path with `/status/<code>`
    answers that status with body `status <code>`; anything else 200 with a JSON echo)."""

    def __init__(self):
        self.requests = []
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def handle_one(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                backend.requests.append({"method": self.command, "path": self.path, "body": body,
                                         "headers": {k.lower(): v for k, v in self.headers.items()}})
                if self.path.startswith("/slow"):
                    time.sleep(1)
                if "/status/" in self.path:
                    code = int(self.path.split("/status/")[1][:3])
                    out = f"status {code}".encode()
                else:
                    code = 200
                    try:
                        echo = json.loads(body)
                    except ValueError:
                        echo = body
                    out = json.dumps({"method": self.command, "path": self.path, "echo": echo}).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Backend", "local")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_DELETE = handle_one

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def seen(self, path_prefix, timeout=10):
        """The requests whose path starts with `path_prefix` (waits for one)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            got = [r for r in self.requests if r["path"].startswith(path_prefix)]
            if got:
                return got
            time.sleep(0.05)
        return []


@pytest.fixture(scope="module")
def backend():
    b = Backend()
    yield b
    b.httpd.shutdown()


def two_way(v2, api_id, key, integration_id):
    route = v2.create_route(ApiId=api_id, RouteKey=key, Target=f"integrations/{integration_id}",
                            RouteResponseSelectionExpression="$default")
    v2.create_route_response(ApiId=api_id, RouteId=route["RouteId"], RouteResponseKey="$default")


def test_http_proxy_forwards_connect_messages_and_disconnect(server, v2, backend):
    api_id = v2.create_api(Name=f"ws-{uid()}", ProtocolType="WEBSOCKET", RouteSelectionExpression="$request.body.action")["ApiId"]
    base = "http://127.0.0.1:${stageVariables.port}"
    conn_id = {"integration.request.header.connectionId": "context.connectionId"}
    connect = v2.create_integration(ApiId=api_id, IntegrationType="HTTP_PROXY", IntegrationMethod="GET",
                                    IntegrationUri=base + "/connect", RequestParameters=conn_id)
    message = v2.create_integration(ApiId=api_id, IntegrationType="HTTP_PROXY", IntegrationMethod="POST",
                                    IntegrationUri=base + "/message",
                                    RequestParameters={**conn_id, "integration.request.querystring.kind": "route.request.body.kind"})
    refuse = v2.create_integration(ApiId=api_id, IntegrationType="HTTP_PROXY", IntegrationMethod="POST",
                                   IntegrationUri=base + "/status/404")
    gone = v2.create_integration(ApiId=api_id, IntegrationType="HTTP_PROXY", IntegrationMethod="DELETE",
                                 IntegrationUri=base + "/disconnect", RequestParameters=conn_id)
    assert "IntegrationResponseSelectionExpression" not in message
    v2.create_route(ApiId=api_id, RouteKey="$connect", Target=f"integrations/{connect['IntegrationId']}")
    v2.create_route(ApiId=api_id, RouteKey="$disconnect", Target=f"integrations/{gone['IntegrationId']}")
    two_way(v2, api_id, "$default", message["IntegrationId"])
    two_way(v2, api_id, "missing", refuse["IntegrationId"])
    v2.create_route(ApiId=api_id, RouteKey="quiet", Target=f"integrations/{message['IntegrationId']}")
    v2.create_stage(ApiId=api_id, StageName="prod", AutoDeploy=True, StageVariables={"port": str(backend.port)})

    ws = connect_ws = websocket.create_connection(ws_url(server, api_id) + "?user=ann", timeout=30,
                                                  header=["X-Client: tester"])
    try:
        # $connect: the upgrade's headers and query string reach the backend, with the mapped
        # connection id; the WebSocket handshake's own headers do not.
        (req,) = backend.seen("/connect?user=ann")
        assert req["method"] == "GET" and req["body"] == ""
        assert req["headers"]["x-client"] == "tester"
        assert "sec-websocket-key" not in req["headers"] and "upgrade" not in req["headers"]
        cid = req["headers"]["connectionid"]
        # A two-way route sends the HTTP answer's body back as it came.
        ws.send(json.dumps({"action": "hello", "kind": "greeting"}))
        got = json.loads(ws.recv())
        assert got == {"method": "POST", "path": "/message?kind=greeting", "echo": {"action": "hello", "kind": "greeting"}}
        (req,) = backend.seen("/message?kind=greeting")
        assert req["headers"]["connectionid"] == cid and req["headers"]["content-type"] == "application/json"
        assert "x-client" not in req["headers"]
        # A one-way route: the backend gets the message, the client nothing.
        ws.send(json.dumps({"action": "quiet", "kind": "hush"}))
        assert backend.seen("/message?kind=hush")
        # A backend's error status passes through too (proxy: no integration response).
        ws.send(json.dumps({"action": "missing"}))
        assert ws.recv() == "status 404"
        ws.send("plain")
        assert json.loads(ws.recv())["echo"] == "plain"
    finally:
        connect_ws.close()
    (req,) = backend.seen("/disconnect")
    assert req["method"] == "DELETE" and req["headers"]["connectionid"] == cid
    # A target slower than the integration's timeout: AWS's frame.
    slow = v2.create_integration(ApiId=api_id, IntegrationType="HTTP_PROXY", IntegrationMethod="POST",
                                 IntegrationUri=base + "/slow", TimeoutInMillis=300)
    two_way(v2, api_id, "slow", slow["IntegrationId"])
    ws = websocket.create_connection(ws_url(server, api_id), timeout=30)
    try:
        ws.send(json.dumps({"action": "slow"}))
        frame = json.loads(ws.recv())
        assert frame["message"] == "Endpoint request timed out" and frame["connectionId"]
    finally:
        ws.close()
    # A $connect backend answering an error status refuses the upgrade with it.
    v2.update_integration(ApiId=api_id, IntegrationId=connect["IntegrationId"], IntegrationUri=base + "/status/403")
    with pytest.raises(websocket.WebSocketBadStatusException) as e:
        websocket.create_connection(ws_url(server, api_id), timeout=30)
    assert e.value.status_code == 403
    # An unreachable target: AWS's 500 for the upgrade, and the server says why in its log.
    v2.update_stage(ApiId=api_id, StageName="prod", StageVariables={"port": "1"})
    with pytest.raises(websocket.WebSocketBadStatusException) as e:
        websocket.create_connection(ws_url(server, api_id), timeout=30)
    assert e.value.status_code == 500


LAMBDA_NON_PROXY = """
exports.handler = async (e) => {
  if (e.fail) throw new Error('denied: ' + e.fail);
  return { got: e, n: 42 };
};
"""


def test_non_proxy_http_aws_and_unsupported(server, v2, lam, backend):
    api_id = v2.create_api(Name=f"ws-{uid()}", ProtocolType="WEBSOCKET", RouteSelectionExpression="$request.body.action")["ApiId"]
    # HTTP: the request template the message's `kind` selects, a path parameter mapped from the
    # body; the integration response the status code selects, and its template picked by status.
    http_integ = v2.create_integration(
        ApiId=api_id, IntegrationType="HTTP", IntegrationMethod="PUT",
        IntegrationUri=f"http://127.0.0.1:{backend.port}/items/{{item}}",
        RequestParameters={"integration.request.path.item": "route.request.body.item"},
        TemplateSelectionExpression="${request.body.kind}",
        RequestTemplates={"$default": '{"wrapped": $input.json(\'$.data\'), "route": "$context.routeKey"}',
                          "short": '{"short": true}'})
    assert http_integ["IntegrationResponseSelectionExpression"] == "${integration.response.statuscode}"
    for key, tse, templates in [
            ("$default", "\\$default", {"$default": "ok $input.path('$.method') $input.path('$.path') $input.json('$.echo')"}),
            ("/4\\d\\d/", "${integration.response.statuscode}", {"404": "not found: $input.body", "$default": "client error"})]:
        v2.create_integration_response(ApiId=api_id, IntegrationId=http_integ["IntegrationId"], IntegrationResponseKey=key,
                                       TemplateSelectionExpression=tse, ResponseTemplates=templates)
    two_way(v2, api_id, "http", http_integ["IntegrationId"])
    # AWS: a Lambda function through the REST APIs' mapping templates; its errorMessage selects.
    fn = node_function(lam, LAMBDA_NON_PROXY)
    aws = v2.create_integration(
        ApiId=api_id, IntegrationType="AWS", IntegrationMethod="POST", IntegrationUri=lambda_uri(fn),
        TemplateSelectionExpression="\\$default",
        RequestTemplates={"$default": '{"msg": "$input.path(\'$.msg\')", "fail": "$!input.path(\'$.fail\')", "conn": "$context.connectionId"}'})
    assert aws["IntegrationResponseSelectionExpression"] == "${integration.response.body.errorMessage}"
    v2.create_integration_response(ApiId=api_id, IntegrationId=aws["IntegrationId"], IntegrationResponseKey="$default",
                                   TemplateSelectionExpression="\\$default",
                                   ResponseTemplates={"$default": "lambda says $input.path('$.n') to $input.path('$.got.msg')"})
    v2.create_integration_response(ApiId=api_id, IntegrationId=aws["IntegrationId"], IntegrationResponseKey="/denied.*/",
                                   TemplateSelectionExpression="\\$default",
                                   ResponseTemplates={"$default": "refused: $input.path('$.errorMessage')"})
    two_way(v2, api_id, "lambda", aws["IntegrationId"])
    # AWS: another service, SQS's SendMessage through its query protocol (the common pattern);
    # the two-way answer is the JSON form of SQS's answer.
    sqs_client = server.client("sqs")
    queue_name = f"ws-{uid()}"
    queue_url = sqs_client.create_queue(QueueName=queue_name)["QueueUrl"]
    sqs = v2.create_integration(
        ApiId=api_id, IntegrationType="AWS", IntegrationMethod="POST",
        IntegrationUri=f"arn:aws:apigateway:us-east-1:sqs:path/000000000000/{queue_name}",
        RequestParameters={"integration.request.header.Content-Type": "'application/x-www-form-urlencoded'"},
        TemplateSelectionExpression="\\$default",
        RequestTemplates={"$default": "Action=SendMessage&MessageBody=$util.urlEncode($input.body)"})
    v2.create_integration_response(ApiId=api_id, IntegrationId=sqs["IntegrationId"], IntegrationResponseKey="$default")
    two_way(v2, api_id, "sqs", sqs["IntegrationId"])
    # What cumulo does not run: an AWS integration of a service it does not emulate.
    kinesis = v2.create_integration(ApiId=api_id, IntegrationType="AWS", IntegrationMethod="POST",
                                    IntegrationUri="arn:aws:apigateway:us-east-1:kinesis:action/PutRecord")
    two_way(v2, api_id, "kinesis", kinesis["IntegrationId"])
    v2.create_stage(ApiId=api_id, StageName="prod", AutoDeploy=True)

    ws = connect(ws_url(server, api_id))
    try:
        ws.send(json.dumps({"action": "http", "item": "a1", "data": {"x": 1}}))
        text = ws.recv()
        assert text.startswith("ok PUT /items/a1 ")
        assert json.loads(text[len("ok PUT /items/a1 "):]) == {"wrapped": {"x": 1}, "route": "http"}
        (req,) = backend.seen("/items/a1")
        assert json.loads(req["body"]) == {"wrapped": {"x": 1}, "route": "http"}
        ws.send(json.dumps({"action": "http", "item": "a2", "kind": "short"}))
        assert json.loads(ws.recv()[len("ok PUT /items/a2 "):]) == {"short": True}
        # `/4\d\d/` matches 404 and 400; its template selection picks the 404 template or $default.
        ws.send(json.dumps({"action": "http", "item": "x/status/404"}))
        assert ws.recv() == "not found: status 404"
        ws.send(json.dumps({"action": "http", "item": "x/status/400"}))
        assert ws.recv() == "client error"
        ws.send(json.dumps({"action": "lambda", "msg": "hi"}))
        assert ws.recv() == "lambda says 42 to hi"
        ws.send(json.dumps({"action": "lambda", "fail": "no"}))
        assert ws.recv() == "refused: denied: no"
        ws.send(json.dumps({"action": "sqs", "n": "a&b=c"}))
        sent = json.loads(ws.recv())["SendMessageResponse"]
        [message] = sqs_client.receive_message(QueueUrl=queue_url, WaitTimeSeconds=5)["Messages"]
        assert message["MessageId"] == sent["SendMessageResult"]["MessageId"]
        assert json.loads(message["Body"]) == {"action": "sqs", "n": "a&b=c"}
        assert sent["ResponseMetadata"]["RequestId"]
        ws.send(json.dumps({"action": "kinesis"}))
        frame = json.loads(ws.recv())
        assert frame["message"] == ("cumulo: AWS integrations reach the services cumulo emulates; kinesis is "
                                    "not one of them (arn:aws:apigateway:us-east-1:kinesis:action/PutRecord)")
        assert frame["connectionId"] and frame["requestId"]
    finally:
        ws.close()


TEMPLATE = """
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Prefix:
    Type: String
    Default: stack
Resources:
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      Role: arn:aws:iam::000000000000:role/lambda
      Code:
        ZipFile: |
          exports.handler = async (event) => ({ statusCode: 200, body: process.env.PREFIX + ':' + event.body });
      Environment:
        Variables:
          PREFIX: !Ref Prefix
  Api:
    Type: AWS::ApiGatewayV2::Api
    Properties:
      Name: !Sub '${AWS::StackName}-ws'
      ProtocolType: WEBSOCKET
      RouteSelectionExpression: $request.body.action
  Integration:
    Type: AWS::ApiGatewayV2::Integration
    Properties:
      ApiId: !Ref Api
      IntegrationType: AWS_PROXY
      IntegrationUri: !Sub 'arn:aws:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/${Fn.Arn}/invocations'
  DefaultRoute:
    Type: AWS::ApiGatewayV2::Route
    Properties:
      ApiId: !Ref Api
      RouteKey: $default
      RouteResponseSelectionExpression: $default
      Target: !Sub 'integrations/${Integration}'
  DefaultRouteResponse:
    Type: AWS::ApiGatewayV2::RouteResponse
    Properties:
      ApiId: !Ref Api
      RouteId: !Ref DefaultRoute
      RouteResponseKey: $default
  PingIntegration:
    Type: AWS::ApiGatewayV2::Integration
    Properties:
      ApiId: !Ref Api
      IntegrationType: MOCK
      TemplateSelectionExpression: \\$default
      RequestTemplates:
        $default: '{"statusCode": 200}'
  PingIntegrationResponse:
    Type: AWS::ApiGatewayV2::IntegrationResponse
    Properties:
      ApiId: !Ref Api
      IntegrationId: !Ref PingIntegration
      IntegrationResponseKey: $default
      TemplateSelectionExpression: \\$default
      ResponseTemplates:
        $default: pong
  PingRoute:
    Type: AWS::ApiGatewayV2::Route
    Properties:
      ApiId: !Ref Api
      RouteKey: ping
      RouteResponseSelectionExpression: $default
      Target: !Sub 'integrations/${PingIntegration}'
  PingRouteResponse:
    Type: AWS::ApiGatewayV2::RouteResponse
    Properties:
      ApiId: !Ref Api
      RouteId: !Ref PingRoute
      RouteResponseKey: $default
  Deployment:
    Type: AWS::ApiGatewayV2::Deployment
    DependsOn: [DefaultRouteResponse, PingRouteResponse, PingIntegrationResponse]
    Properties:
      ApiId: !Ref Api
  Stage:
    Type: AWS::ApiGatewayV2::Stage
    Properties:
      ApiId: !Ref Api
      StageName: live
      DeploymentId: !Ref Deployment
  Permission:
    Type: AWS::Lambda::Permission
    Properties:
      Action: lambda:InvokeFunction
      FunctionName: !Ref Fn
      Principal: apigateway.amazonaws.com
      SourceArn: !Sub 'arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${Api}/*'
Outputs:
  ApiId:
    Value: !Ref Api
  Endpoint:
    Value: !GetAtt Api.ApiEndpoint
"""


def test_cloudformation_stack_answers_over_websocket(server, tmp_path):
    stack = f"ws-{uid()}"
    path = tmp_path / "ws.yaml"
    path.write_text(TEMPLATE)
    server.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path))
    cfn = server.client("cloudformation")
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    api_id = out["ApiId"]
    assert out["Endpoint"] == f"ws://{api_id}.execute-api.localhost:{server.port}"
    v2 = server.client("apigatewayv2")
    assert v2.get_api(ApiId=api_id)["ProtocolType"] == "WEBSOCKET"
    ws = connect(ws_url(server, api_id, "live"))
    try:
        ws.send("hello")
        assert ws.recv() == "stack:hello"
        ws.send(json.dumps({"action": "ping"}))
        assert ws.recv() == "pong"
    finally:
        ws.close()
    # An update reaches the open API: the function's new answer comes back.
    server.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path),
               "--parameter-overrides", "Prefix=updated")
    ws = connect(ws_url(server, api_id, "live"))
    try:
        ws.send("again")
        assert ws.recv() == "updated:again"
    finally:
        ws.close()
    fn = cfn.describe_stack_resource(StackName=stack, LogicalResourceId="Fn")["StackResourceDetail"]["PhysicalResourceId"]
    server.aws("cloudformation", "delete-stack", "--stack-name", stack)
    server.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", stack)
    assert api_id not in [a["ApiId"] for a in v2.get_apis()["Items"]]
    with pytest.raises(botocore.exceptions.ClientError):
        server.client("lambda").get_function(FunctionName=fn)
    with pytest.raises(websocket.WebSocketBadStatusException):
        connect(ws_url(server, api_id, "live"))


INTEGRATIONS_TEMPLATE = """
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Backend:
    Type: String
Resources:
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      Role: arn:aws:iam::000000000000:role/lambda
      Code:
        ZipFile: |
          exports.handler = async (e) => ({ sum: e.a + e.b });
  Api:
    Type: AWS::ApiGatewayV2::Api
    Properties:
      Name: !Sub '${AWS::StackName}-ws'
      ProtocolType: WEBSOCKET
      RouteSelectionExpression: ${request.body.action}
  ProxyIntegration:
    Type: AWS::ApiGatewayV2::Integration
    Properties:
      ApiId: !Ref Api
      IntegrationType: HTTP_PROXY
      IntegrationMethod: POST
      IntegrationUri: !Sub '${Backend}/cfn'
      RequestParameters:
        integration.request.header.connectionId: context.connectionId
  DefaultRoute:
    Type: AWS::ApiGatewayV2::Route
    Properties:
      ApiId: !Ref Api
      RouteKey: $default
      RouteResponseSelectionExpression: $default
      Target: !Sub 'integrations/${ProxyIntegration}'
  DefaultRouteResponse:
    Type: AWS::ApiGatewayV2::RouteResponse
    Properties:
      ApiId: !Ref Api
      RouteId: !Ref DefaultRoute
      RouteResponseKey: $default
  AddIntegration:
    Type: AWS::ApiGatewayV2::Integration
    Properties:
      ApiId: !Ref Api
      IntegrationType: AWS
      IntegrationMethod: POST
      IntegrationUri: !Sub 'arn:aws:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/${Fn.Arn}/invocations'
      TemplateSelectionExpression: \\$default
      RequestTemplates:
        $default: '{"a": $input.json(''$.a''), "b": $input.json(''$.b'')}'
  AddIntegrationResponse:
    Type: AWS::ApiGatewayV2::IntegrationResponse
    Properties:
      ApiId: !Ref Api
      IntegrationId: !Ref AddIntegration
      IntegrationResponseKey: $default
      TemplateSelectionExpression: \\$default
      ResponseTemplates:
        $default: 'sum=$input.path(''$.sum'')'
  AddRoute:
    Type: AWS::ApiGatewayV2::Route
    Properties:
      ApiId: !Ref Api
      RouteKey: add
      RouteResponseSelectionExpression: $default
      Target: !Sub 'integrations/${AddIntegration}'
  AddRouteResponse:
    Type: AWS::ApiGatewayV2::RouteResponse
    Properties:
      ApiId: !Ref Api
      RouteId: !Ref AddRoute
      RouteResponseKey: $default
  Stage:
    Type: AWS::ApiGatewayV2::Stage
    DependsOn: [DefaultRouteResponse, AddRouteResponse, AddIntegrationResponse]
    Properties:
      ApiId: !Ref Api
      StageName: live
      AutoDeploy: true
  Permission:
    Type: AWS::Lambda::Permission
    Properties:
      Action: lambda:InvokeFunction
      FunctionName: !Ref Fn
      Principal: apigateway.amazonaws.com
      SourceArn: !Sub 'arn:aws:execute-api:${AWS::Region}:${AWS::AccountId}:${Api}/*'
  Domain:
    Type: AWS::ApiGatewayV2::DomainName
    Properties:
      DomainName: !Sub '${AWS::StackName}.example.com'
      DomainNameConfigurations:
        - CertificateArn: arn:aws:acm:us-east-1:000000000000:certificate/x
          EndpointType: REGIONAL
  Mapping:
    Type: AWS::ApiGatewayV2::ApiMapping
    Properties:
      DomainName: !Ref Domain
      ApiId: !Ref Api
      Stage: !Ref Stage
      ApiMappingKey: chat
Outputs:
  ApiId:
    Value: !Ref Api
"""


def test_cloudformation_http_proxy_and_aws_routes(server, backend, tmp_path):
    stack = f"wsint-{uid()}"
    path = tmp_path / "wsint.yaml"
    path.write_text(INTEGRATIONS_TEMPLATE)
    server.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path),
               "--parameter-overrides", f"Backend=http://127.0.0.1:{backend.port}")
    cfn = server.client("cloudformation")
    api_id = cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"][0]["OutputValue"]
    v2 = server.client("apigatewayv2")
    integrations = {i["IntegrationType"]: i for i in v2.get_integrations(ApiId=api_id)["Items"]}
    assert set(integrations) == {"HTTP_PROXY", "AWS"}
    assert integrations["HTTP_PROXY"]["IntegrationUri"] == f"http://127.0.0.1:{backend.port}/cfn"
    assert integrations["AWS"]["RequestTemplates"] == {"$default": '{"a": $input.json(\'$.a\'), "b": $input.json(\'$.b\')}'}
    (ir,) = v2.get_integration_responses(ApiId=api_id, IntegrationId=integrations["AWS"]["IntegrationId"])["Items"]
    assert (ir["IntegrationResponseKey"], ir["ResponseTemplates"]) == ("$default", {"$default": "sum=$input.path('$.sum')"})
    routes = {r["RouteKey"]: r for r in v2.get_routes(ApiId=api_id)["Items"]}
    assert set(routes) == {"$default", "add"}
    (mapping,) = v2.get_api_mappings(DomainName=f"{stack}.example.com")["Items"]
    assert (mapping["ApiId"], mapping["Stage"], mapping["ApiMappingKey"]) == (api_id, "live", "chat")
    ws = connect(ws_url(server, api_id, "live"))
    try:
        ws.send(json.dumps({"action": "add", "a": 2, "b": 3}))
        assert ws.recv() == "sum=5"
        ws.send("via proxy")
        assert json.loads(ws.recv()) == {"method": "POST", "path": "/cfn", "echo": "via proxy"}
        assert backend.seen("/cfn")[-1]["headers"]["connectionid"]
    finally:
        ws.close()
    fn = cfn.describe_stack_resource(StackName=stack, LogicalResourceId="Fn")["StackResourceDetail"]["PhysicalResourceId"]
    server.aws("cloudformation", "delete-stack", "--stack-name", stack)
    server.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", stack)
    assert api_id not in [a["ApiId"] for a in v2.get_apis()["Items"]]
    assert f"{stack}.example.com" not in [d["DomainName"] for d in v2.get_domain_names()["Items"]]
    with pytest.raises(botocore.exceptions.ClientError):
        server.client("lambda").get_function(FunctionName=fn)
    with pytest.raises(websocket.WebSocketBadStatusException):
        connect(ws_url(server, api_id, "live"))


def test_management_api_is_signed_when_signatures_are_verified(tmp_path):
    """@connections is IAM-signed on AWS (the data plane is not): with --verify-signatures an
    unsigned call is refused and a signed one reaches the API."""
    s = CumuloServer(data_dir=tmp_path / "data", extra_args=["--verify-signatures"]).start()
    try:
        v2 = s.client("apigatewayv2")
        api_id = v2.create_api(Name="s", ProtocolType="WEBSOCKET", RouteSelectionExpression="$request.body.action")["ApiId"]
        v2.create_stage(ApiId=api_id, StageName="prod", AutoDeploy=True)
        unsigned = s.raw("GET", f"/_aws/execute-api/{api_id}/prod/@connections/abc")
        assert unsigned.status == 403 and b"Missing Authentication Token" in unsigned.body
        with pytest.raises(botocore.exceptions.ClientError) as e:
            management(s, api_id).get_connection(ConnectionId="abc")
        assert e.value.response["Error"]["Code"] == "GoneException"
        with pytest.raises(botocore.exceptions.ClientError) as e:
            boto3.client("apigatewaymanagementapi", region_name="us-east-1",
                         endpoint_url=f"{s.endpoint}/_aws/execute-api/{api_id}/prod",
                         aws_access_key_id="test", aws_secret_access_key="wrong").get_connection(ConnectionId="abc")
        assert e.value.response["Error"]["Code"] == "InvalidSignatureException"
    finally:
        s.stop()


def test_restart_closes_connections_and_keeps_the_api(tmp_path):
    """Connections are live process state: a restart closes them; the API still answers."""
    s = CumuloServer(data_dir=tmp_path / "data").start()
    try:
        fn_src = "exports.handler = async (e) => ({ statusCode: 200, body: 'again:' + e.body });"
        lam = s.client("lambda")
        fn = node_function(lam, fn_src)
        v2 = s.client("apigatewayv2")
        api = v2.create_api(Name="r", ProtocolType="WEBSOCKET", RouteSelectionExpression="$request.body.action")
        integ = v2.create_integration(ApiId=api["ApiId"], IntegrationType="AWS_PROXY", IntegrationUri=lambda_uri(fn))
        route = v2.create_route(ApiId=api["ApiId"], RouteKey="$default", Target=f"integrations/{integ['IntegrationId']}",
                                RouteResponseSelectionExpression="$default")
        v2.create_route_response(ApiId=api["ApiId"], RouteId=route["RouteId"], RouteResponseKey="$default")
        v2.create_stage(ApiId=api["ApiId"], StageName="prod", AutoDeploy=True)
        ws = connect(ws_url(s, api["ApiId"]))
        ws.send("a")
        assert ws.recv() == "again:a"
        s.stop()
        with pytest.raises((websocket.WebSocketConnectionClosedException, ConnectionError, OSError)):
            ws.send("b")
            ws.recv()
        s.start()
        ws = connect(ws_url(s, api["ApiId"]))
        ws.send("c")
        assert ws.recv() == "again:c"
        ws.close()
    finally:
        s.stop()
