"""The console in a real headless Chromium (Debian's chromium + chromium-driver, driven by
selenium): a stack that deploys and one whose resource fails and rolls back, checked through
the page's DOM against what boto3 reports; a bucket's listing; a message sent from the console
and received with boto3; the stacks list following a new stack live. Screenshots of each page
go to tests/e2e/artifacts/ (git-ignored)."""
import json
import pathlib
import shutil
import time
import urllib.parse

import pytest
from console_stacks import deploy, uid

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait as _WebDriverWait  # noqa: E402


def WebDriverWait(driver, timeout):
    """A wait that also retries a stale element: a condition that reads an element while a form's
    submit navigates (or a live view re-renders) finds it detached, which is "not yet", not a
    failure (the full suite on a loaded 2-core runner hit exactly that)."""
    return _WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,))

ARTIFACTS = pathlib.Path(__file__).parent / "artifacts"


def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.fixture(scope="module")
def browser():
    binary, driver_path = chromium(), shutil.which("chromedriver")
    if not binary or not driver_path:
        pytest.fail("chromium and chromedriver are required (scripts/test installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"]:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(20)
    ARTIFACTS.mkdir(exist_ok=True)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def stacks(cumulo):
    return deploy(cumulo)


def wait(driver, css, timeout=15, count=1):
    """The elements matching `css` once there are at least `count` of them."""
    found = WebDriverWait(driver, timeout).until(
        lambda d: (lambda e: e if len(e) >= count else None)(d.find_elements(By.CSS_SELECTOR, css))
    )
    return found


def shot(driver, name):
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def page(driver, cumulo, path):
    driver.get(f"{cumulo.endpoint}/_cumulo/console{path}")


def test_stacks_list_shows_statuses_nesting_and_follows_live(browser, cumulo, stacks):
    good, failing = stacks
    cfn = cumulo.client("cloudformation")
    page(browser, cumulo, "/")
    wait(browser, f'tr[data-stack="{failing}"]')
    for name in (good, failing):
        row = browser.find_element(By.CSS_SELECTOR, f'tr[data-stack="{name}"]')
        badge = row.find_element(By.CSS_SELECTOR, ".status")
        assert badge.text == cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"]
    assert "st-rollback" in browser.find_element(By.CSS_SELECTOR, f'tr[data-stack="{failing}"] .status').get_attribute("class")
    assert "st-ok" in browser.find_element(By.CSS_SELECTOR, f'tr[data-stack="{good}"] .status').get_attribute("class")
    # The nested stack is the row right under its parent, indented.
    rows = browser.find_elements(By.CSS_SELECTOR, "#stacks-table tbody tr")
    i = [r.get_attribute("data-stack") for r in rows].index(good)
    assert "depth-1" in rows[i + 1].get_attribute("class")
    assert rows[i + 1].get_attribute("data-stack").startswith(f"{good}-Child")
    # Health and data directory in the header.
    assert "store ok" in browser.find_element(By.ID, "health").text
    assert browser.find_element(By.ID, "datadir").text.startswith("data: ")
    shot(browser, "stacks")

    # Live: a stack created now appears without a reload.
    marker = browser.execute_script("return window.performance.timeOrigin")
    fresh = f"con-live-{uid()}"
    cfn.create_stack(StackName=fresh, TemplateBody='{"Resources": {"T": {"Type": "AWS::SNS::Topic"}}}')
    row = wait(browser, f'tr[data-stack="{fresh}"]', timeout=10)[0]
    assert browser.execute_script("return window.performance.timeOrigin") == marker
    WebDriverWait(browser, 10).until(
        lambda d: d.find_element(By.CSS_SELECTOR, f'tr[data-stack="{fresh}"] .status').text == "CREATE_COMPLETE"
    )
    assert row is not None
    cfn.delete_stack(StackName=fresh)


def test_failed_stack_timeline_and_graph(browser, cumulo, stacks):
    _, failing = stacks
    cfn = cumulo.client("cloudformation")
    page(browser, cumulo, f"/stacks/{failing}")
    wait(browser, "#events-timeline .tl-row")
    assert browser.find_element(By.CSS_SELECTOR, "#overview .status").text == "ROLLBACK_COMPLETE"
    events = cfn.describe_stack_events(StackName=failing)["StackEvents"]
    reason = next(
        e["ResourceStatusReason"] for e in events if e["LogicalResourceId"] == "Bad" and e["ResourceStatus"] == "CREATE_FAILED"
    )
    bad = browser.find_element(By.CSS_SELECTOR, '#events-timeline .tl-row[data-logical-id="Bad"]')
    statuses = [b.get_attribute("data-status") for b in bad.find_elements(By.CSS_SELECTOR, ".tl-bar")]
    assert "CREATE_FAILED" in statuses
    failed_bar = bad.find_element(By.CSS_SELECTOR, '.tl-bar[data-status="CREATE_FAILED"]')
    assert "st-failed" in failed_bar.get_attribute("class")
    assert bad.find_element(By.CSS_SELECTOR, ".failure").text == f"CREATE_FAILED: {reason}"
    # Good was created, then deleted by the rollback: two bars on its row.
    good = browser.find_element(By.CSS_SELECTOR, '#events-timeline .tl-row[data-logical-id="Good"]')
    assert [b.get_attribute("data-status") for b in good.find_elements(By.CSS_SELECTOR, ".tl-bar")] == [
        "CREATE_COMPLETE",
        "DELETE_COMPLETE",
    ]
    # Every event is in the log, as boto3 lists them.
    ids = [r.get_attribute("data-event-id") for r in browser.find_elements(By.CSS_SELECTOR, "#events-table tr")]
    assert ids == [e["EventId"] for e in events]
    # The graph: both resources, the DependsOn edge, statuses as DescribeStackResources says.
    nodes = {n.get_attribute("data-logical-id"): n for n in wait(browser, "#resource-graph g.node", count=2)}
    assert set(nodes) == {"Good", "Bad"}
    edge = browser.find_element(By.CSS_SELECTOR, '#resource-graph g.edge[data-from="Bad"][data-to="Good"]')
    assert edge.get_attribute("data-kinds") == "DependsOn"
    aws = {r["LogicalResourceId"]: r["ResourceStatus"] for r in cfn.describe_stack_resources(StackName=failing)["StackResources"]}
    for k, n in nodes.items():
        assert n.get_attribute("data-status") == aws.get(k, ""), k
        assert n.is_displayed() and n.size["width"] > 100, k
    browser.execute_script("document.getElementById('sec-events').scrollIntoView()")
    shot(browser, "stack-failed-timeline")
    browser.execute_script("document.getElementById('sec-graph').scrollIntoView()")
    shot(browser, "stack-failed-graph")


def test_good_stack_parameters_graph_and_template(browser, cumulo, stacks):
    good, _ = stacks
    cfn = cumulo.client("cloudformation")
    page(browser, cumulo, f"/stacks/{good}")
    wait(browser, "#resource-graph g.node", count=6)
    params = {
        r.find_elements(By.TAG_NAME, "td")[0].text: r.find_elements(By.TAG_NAME, "td")[1].text
        for r in browser.find_elements(By.CSS_SELECTOR, "#parameters tbody tr")
    }
    aws = cfn.describe_stacks(StackName=good)["Stacks"][0]
    assert params == {p["ParameterKey"]: p["ParameterValue"] for p in aws["Parameters"]}
    assert params["Secret"] == "****"
    outputs = [r.find_elements(By.TAG_NAME, "td")[1].text for r in browser.find_elements(By.CSS_SELECTOR, "#outputs tbody tr")]
    assert sorted(outputs) == sorted(o["OutputValue"] for o in aws["Outputs"])
    for node in browser.find_elements(By.CSS_SELECTOR, "#resource-graph g.node"):
        assert node.is_displayed() and node.size["width"] > 100, node.get_attribute("data-logical-id")
    stub = browser.find_element(By.CSS_SELECTOR, '#resource-graph g.node[data-logical-id="Stub"]')
    assert "stubbed" in stub.get_attribute("class")
    assert "cumulo: AWS::Redshift::Cluster is not emulated" in stub.find_element(By.TAG_NAME, "title").get_attribute("textContent")
    # The bucket's node links to the bucket's view.
    link = browser.find_element(By.CSS_SELECTOR, '#resource-graph a:has(g.node[data-logical-id="Bucket"])')
    assert link.get_dom_attribute("href") == f"/_cumulo/console/s3/{good}-bucket"
    template = wait(browser, "#template-text .hl-tag")
    assert "!GetAtt" in [t.text for t in template]
    assert "stub" in browser.find_element(By.CSS_SELECTOR, '#resources-table tr[data-logical-id="Stub"]').text
    browser.execute_script("document.getElementById('sec-graph').scrollIntoView()")
    shot(browser, "stack-graph")
    browser.execute_script("document.getElementById('sec-template').scrollIntoView()")
    shot(browser, "stack-template")


def test_bucket_listing_matches_list_objects(browser, cumulo, stacks):
    good, _ = stacks
    s3 = cumulo.client("s3")
    bucket = f"{good}-bucket"
    for key in ["readme.txt", "data/a.json", "data/b.json", "zeta.bin"]:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode() * 3)
    page(browser, cumulo, f"/s3/{bucket}")
    rows = wait(browser, "#objects-table tr[data-key]", count=2)
    aws = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert [r.get_attribute("data-key") for r in rows] == [o["Key"] for o in aws["Contents"]]
    sizes = [r.find_element(By.CSS_SELECTOR, "td.num").text for r in rows]
    assert sizes == [str(o["Size"]) for o in aws["Contents"]]
    folders = [f.text for f in browser.find_elements(By.CSS_SELECTOR, "#objects-table tr.folder")]
    assert folders == [p["Prefix"] for p in aws["CommonPrefixes"]]
    shot(browser, "s3-objects")
    browser.find_element(By.LINK_TEXT, "data/").click()
    rows = wait(browser, "#objects-table tr[data-key]", count=2)
    assert [r.get_attribute("data-key") for r in rows] == ["data/a.json", "data/b.json"]


def test_send_from_the_console_and_receive_with_boto3(browser, cumulo, stacks):
    good, _ = stacks
    sqs = cumulo.client("sqs")
    name = f"{good}-queue"
    url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    page(browser, cumulo, f"/sqs/{urllib.parse.quote(name)}")
    box = wait(browser, "#send-body")[0]
    text = f"hello from chromium {uid()}"
    box.send_keys(text)
    browser.find_element(By.ID, "send-button").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "sqs-status").text.startswith("Sent message"))
    sent_id = browser.find_element(By.ID, "sqs-status").text.split()[-1]
    # Peeked on the page, not consumed.
    row = wait(browser, f'#messages-table tr[data-message-id="{sent_id}"]')[0]
    assert text in row.text and "visible" in row.text
    attrs = {
        r.find_elements(By.TAG_NAME, "td")[0].text: r.find_elements(By.TAG_NAME, "td")[1].text
        for r in browser.find_elements(By.CSS_SELECTOR, "#attributes-table tbody tr")
    }
    assert attrs["QueueArn"] == sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    shot(browser, "sqs-queue")
    got = []
    deadline = time.time() + 5
    while time.time() < deadline and not any(m["MessageId"] == sent_id for m in got):
        got += sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    mine = [m for m in got if m["MessageId"] == sent_id]
    assert len(mine) == 1 and mine[0]["Body"] == text
    for m in got:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def test_search_and_error_pages(browser, cumulo, stacks):
    good, _ = stacks
    page(browser, cumulo, "/")
    box = wait(browser, "#search-box")[0]
    box.send_keys(f"{good}-bucket\n")
    rows = wait(browser, "#search-results tr[data-kind]", count=2)
    assert {r.get_attribute("data-kind") for r in rows} == {"bucket", "resource"}
    shot(browser, "search")
    page(browser, cumulo, f"/stacks/nope-{uid()}")
    alert = wait(browser, "#overview .error")[0]
    assert "StackNotFound" in alert.text and "does not exist" in alert.text
    page(browser, cumulo, "/no/such/page")
    assert "No such page" in wait(browser, "#content .error")[0].text


def test_update_rollback_on_the_timeline(browser, cumulo):
    cfn = cumulo.client("cloudformation")
    name = f"con-upd-{uid()}"
    first = {"Resources": {"Keep": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{name}-keep"}}}}
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(first))
    cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig={"Delay": 1})
    second = json.loads(json.dumps(first))
    second["Resources"]["Bad"] = {
        "Type": "AWS::SQS::Queue",
        "Properties": {"QueueName": f"{name}-bad", "MessageRetentionPeriod": 1},
    }
    cfn.update_stack(StackName=name, TemplateBody=json.dumps(second))
    deadline = time.time() + 30
    while cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"] != "UPDATE_ROLLBACK_COMPLETE":
        assert time.time() < deadline, "the update did not roll back"
        time.sleep(0.3)
    page(browser, cumulo, f"/stacks/{name}")
    wait(browser, '#events-timeline .tl-row[data-logical-id="Bad"]')
    assert browser.find_element(By.CSS_SELECTOR, "#overview .status").text == "UPDATE_ROLLBACK_COMPLETE"
    stack_row = browser.find_element(By.CSS_SELECTOR, f'#events-timeline .tl-row[data-logical-id="{name}"]')
    phases = [b.get_attribute("data-status") for b in stack_row.find_elements(By.CSS_SELECTOR, ".tl-bar")]
    assert phases == ["CREATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_ROLLBACK_IN_PROGRESS", "UPDATE_ROLLBACK_COMPLETE"]
    bad = browser.find_element(By.CSS_SELECTOR, '#events-timeline .tl-row[data-logical-id="Bad"]')
    reason = next(
        e["ResourceStatusReason"]
        for e in cfn.describe_stack_events(StackName=name)["StackEvents"]
        if e["LogicalResourceId"] == "Bad" and e["ResourceStatus"] == "CREATE_FAILED"
    )
    assert bad.find_element(By.CSS_SELECTOR, ".failure").text == f"CREATE_FAILED: {reason}"
    browser.execute_script("document.getElementById('sec-events').scrollIntoView()")
    shot(browser, "stack-update-rollback-timeline")
    cfn.delete_stack(StackName=name)


def test_parameter_and_secret_stay_hidden_until_revealed(browser, cumulo):
    ssm, sm = cumulo.client("ssm"), cumulo.client("secretsmanager")
    name = f"/con-b-{uid()}/db-password"
    ssm.put_parameter(Name=name, Value="param-s3cret", Type="SecureString")
    page(browser, cumulo, f"/ssm/{urllib.parse.quote(name, safe='')}")
    value = wait(browser, "#secure-value")[0]
    assert value.text == "****" and "param-s3cret" not in browser.page_source
    browser.find_element(By.ID, "secure-value-reveal").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "secure-value").text == "param-s3cret")
    shot(browser, "ssm-parameter")

    arn = sm.create_secret(Name=f"con-b-{uid()}", SecretString='{"user": "u", "password": "sm-s3cret"}')["ARN"]
    page(browser, cumulo, f"/secretsmanager/{urllib.parse.quote(arn, safe='')}")
    assert wait(browser, "#secret-string")[0].text == "****"
    assert "sm-s3cret" not in browser.page_source
    versions = browser.find_elements(By.CSS_SELECTOR, "#versions-table tbody tr")
    assert len(versions) == 1 and "AWSCURRENT" in versions[0].text
    browser.find_element(By.ID, "secret-string-reveal").click()
    WebDriverWait(browser, 10).until(lambda d: "sm-s3cret" in d.find_element(By.ID, "secret-string").text)
    assert json.loads(browser.find_element(By.ID, "secret-string").text) == json.loads(
        sm.get_secret_value(SecretId=arn)["SecretString"]
    )
    shot(browser, "secret")


def test_dynamodb_items_query_and_lambda_invoke(browser, cumulo):
    import io
    import zipfile

    ddb = cumulo.client("dynamodb")
    table = f"con-b-{uid()}"
    ddb.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    for i in range(3):
        ddb.put_item(TableName=table, Item={"pk": {"S": f"k{i}"}, "n": {"N": str(i)}})
    page(browser, cumulo, f"/dynamodb/{table}")
    rows = wait(browser, "#items-table tbody tr", count=3)
    assert sorted(r.find_element(By.CSS_SELECTOR, 'td[data-column="pk"]').text for r in rows) == ["k0", "k1", "k2"]
    browser.find_element(By.ID, "key_condition").send_keys("pk = :pk")
    browser.find_element(By.ID, "values").send_keys('{":pk": {"S": "k1"}}')
    browser.find_element(By.ID, "items-run").click()
    WebDriverWait(browser, 10).until(lambda d: "Query: 1 items" in d.find_element(By.ID, "items-count").text)
    assert [r.text for r in browser.find_elements(By.CSS_SELECTOR, '#items-table td[data-column="n"]')] == ["1"]
    shot(browser, "dynamodb-table")

    lam = cumulo.client("lambda")
    fn = f"con-b-{uid()}"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("app.py", "def handler(e, c):\n    print('browser invoked')\n    return {'doubled': e['n'] * 2}\n")
    lam.create_function(FunctionName=fn, Runtime="python3.11", Role="arn:aws:iam::000000000000:role/r",
                        Handler="app.handler", Code={"ZipFile": buf.getvalue()})
    lam.get_waiter("function_active_v2").wait(FunctionName=fn, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    page(browser, cumulo, f"/lambda/{fn}")
    payload = wait(browser, "#invoke-payload")[0]
    payload.clear()
    payload.send_keys('{"n": 21}')
    browser.find_element(By.ID, "invoke-button").click()
    status = wait(browser, "#invoke-status")[0]
    assert status.text.startswith("Succeeded")
    assert json.loads(browser.find_element(By.ID, "invoke-response").text) == {"doubled": 42}
    assert "browser invoked" in browser.find_element(By.ID, "invoke-log").text
    shot(browser, "lambda-function")
    page(browser, cumulo, f"/lambda/{fn}")
    [row] = wait(browser, "#invocations-table tbody tr")
    assert "Duration" in row.text
    # Its log group's page shows the invocation's output.
    browser.find_element(By.LINK_TEXT, f"/aws/lambda/{fn}").click()
    WebDriverWait(browser, 15).until(
        lambda d: any("browser invoked" in c.text for c in d.find_elements(By.CSS_SELECTOR, "#events-table td.log"))
    )
    shot(browser, "log-group")


def test_state_machine_graph_and_execution(browser, cumulo):
    from test_console_api import SFN_DEFINITION, run_execution

    sfn = cumulo.client("stepfunctions")
    name = f"con-b-{uid()}"
    machine = sfn.create_state_machine(name=name, definition=json.dumps(SFN_DEFINITION),
                                       roleArn="arn:aws:iam::000000000000:role/sfn")["stateMachineArn"]
    arn = run_execution(sfn, machine, {"fail": True})
    page(browser, cumulo, f"/stepfunctions/{name}")
    nodes = wait(browser, "#resource-graph g.node", count=3)
    assert sorted(n.get_attribute("data-logical-id") for n in nodes) == ["Boom", "Check", "Done"]
    edges = {(e.get_attribute("data-from"), e.get_attribute("data-to")) for e in browser.find_elements(By.CSS_SELECTOR, "#resource-graph g.edge")}
    assert edges == {("Check", "Boom"), ("Check", "Done")}
    row = wait(browser, "#executions-table tbody tr")[0]
    assert row.find_element(By.CSS_SELECTOR, ".status").text == sfn.describe_execution(executionArn=arn)["status"] == "FAILED"
    row.find_element(By.TAG_NAME, "a").click()
    wait(browser, "#history-table tbody tr", count=3)
    statuses = {n.get_attribute("data-logical-id"): n.get_attribute("data-status") for n in browser.find_elements(By.CSS_SELECTOR, "#resource-graph g.node")}
    assert statuses == {"Check": "SUCCEEDED", "Boom": "FAILED", "Done": ""}
    assert "Asked" in browser.find_element(By.ID, "execution-error").text
    shot(browser, "state-machine-execution")


def test_vpc_map_marks_public_subnets_and_search_finds_them(browser, cumulo):
    ec2 = cumulo.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.77.0.0/16")["Vpc"]["VpcId"]
    public = ec2.create_subnet(VpcId=vpc, CidrBlock="10.77.1.0/24", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    private = ec2.create_subnet(VpcId=vpc, CidrBlock="10.77.2.0/24", AvailabilityZone="us-east-1b")["Subnet"]["SubnetId"]
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    rtb = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=rtb, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    ec2.associate_route_table(RouteTableId=rtb, SubnetId=public)
    page(browser, cumulo, f"/search?q={private}")
    wait(browser, "#search-results tbody tr")[0].find_element(By.TAG_NAME, "a").click()
    cards = {c.get_attribute("data-subnet"): c for c in wait(browser, "#vpc-map .subnet", count=2)}
    assert "public" in cards[public].get_attribute("class") and cards[public].get_attribute("data-route-table") == rtb
    assert f"0.0.0.0/0 → {igw}" in cards[public].text
    assert "public" not in cards[private].get_attribute("class") and "(main)" in cards[private].text
    shot(browser, "vpc-map")


def test_every_service_page_renders_what_the_api_holds(browser, cumulo):
    """Each list page and one detail page per service render their table with no error (the
    services other tests of this module fill may also be empty when run alone)."""
    p = f"con-b-{uid()}"
    topic = cumulo.client("sns").create_topic(Name=p)["TopicArn"]
    cumulo.client("logs").create_log_group(logGroupName=f"/{p}/logs")
    iam = cumulo.client("iam")
    iam.create_role(RoleName=p, AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "ecs-tasks.amazonaws.com"}, "Action": "sts:AssumeRole"}]}))
    key = cumulo.client("kms").create_key()["KeyMetadata"]["KeyId"]
    cumulo.client("events").put_rule(Name=p, ScheduleExpression="rate(1 hour)")
    zone = cumulo.client("route53").create_hosted_zone(Name=f"{p}.example.com", CallerReference=p)["HostedZone"]["Id"].split("/")[-1]
    cert = cumulo.client("acm").request_certificate(DomainName=f"{p}.example.com")["CertificateArn"]
    api_id = cumulo.client("apigatewayv2").create_api(Name=p, ProtocolType="HTTP")["ApiId"]
    cumulo.client("apigatewayv2").create_route(ApiId=api_id, RouteKey="GET /x")
    cumulo.client("ecs").create_cluster(clusterName=p)
    ec2, elb = cumulo.client("ec2"), cumulo.client("elbv2")
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    subnets = [s["SubnetId"] for s in ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"]][:2]
    lb = elb.create_load_balancer(Name=p[:32], Subnets=subnets)["LoadBalancers"][0]["LoadBalancerArn"]
    elb.create_listener(LoadBalancerArn=lb, Protocol="HTTP", Port=80,
                        DefaultActions=[{"Type": "fixed-response", "FixedResponseConfig": {"StatusCode": "404"}}])
    q = lambda s: urllib.parse.quote(s, safe="")  # noqa: E731
    pages = [
        ("/sns/", "#topics-table"), (f"/sns/{p}", "#attributes-table"),
        ("/dynamodb/", "#tables-table, #content p.empty"), ("/ssm/", "#parameters-table, #content p.empty"), ("/secretsmanager/", "#secrets-table, #content p.empty"),
        ("/lambda/", "#functions-table, #content p.empty"), ("/logs/", "#groups-table"), (f"/logs/{q('/' + p + '/logs')}", "#events-table"),
        ("/iam/", "#roles-table"), (f"/iam/roles/{p}", "#trust-policy"),
        ("/kms/", "#keys-table"), (f"/kms/{key}", "#metadata-table"),
        ("/events/", ".rules-table"), (f"/events/{p}", "#tags-table"),
        ("/stepfunctions/", "#machines-table, #content p.empty"), ("/route53/", "#zones-table"), (f"/route53/{zone}", "#records-table"),
        ("/acm/", "#certificates-table"), (f"/acm/{q(cert)}", "#validation-table"),
        ("/apigateway/", "#apis-table"), (f"/apigateway/{api_id}", "#routes-table"),
        ("/ecs/", "#clusters-table"), (f"/ecs/{p}", "#tags-table"),
        ("/elb/", "#load-balancers-table"), (f"/elb/{q(lb)}", "#listeners"),
        ("/ec2/", "#vpcs-table"), (f"/ec2/{vpc}", "#vpc-map"),
    ]
    for path, css in pages:
        page(browser, cumulo, path)
        wait(browser, css)
        assert not browser.find_elements(By.CSS_SELECTOR, "#content .error"), path
    page(browser, cumulo, f"/sns/{p}")
    assert wait(browser, '#attributes-table tr[data-key="TopicArn"] td.value')[0].text == topic
    page(browser, cumulo, f"/apigateway/{api_id}")
    assert [r.get_attribute("data-route") for r in wait(browser, "#routes-table tbody tr")] == ["GET /x"]
    shot(browser, "api-gateway")
    # The session's server is shared: the default subnets' addresses go back (test_ec2 counts them).
    elb.delete_load_balancer(LoadBalancerArn=lb)


def test_stack_page_shows_drift_per_resource_and_the_differences(browser, cumulo):
    from console_stacks import drifted

    name, aws = drifted(cumulo)
    page(browser, cumulo, f"/stacks/{name}")
    wait(browser, "#drift-table tbody tr", count=2)
    assert browser.find_element(By.ID, "stack-drift").text == "DRIFTED"
    column = {r.get_attribute("data-logical-id"): r.find_element(By.CSS_SELECTOR, "td.drift").text
              for r in browser.find_elements(By.CSS_SELECTOR, "#resources-table tbody tr")}
    assert column == {d["LogicalResourceId"]: d["StackResourceDriftStatus"] for d in aws} == {"Changed": "MODIFIED", "Kept": "IN_SYNC"}
    assert "drift-modified" in browser.find_element(By.CSS_SELECTOR, '#resources-table tr[data-logical-id="Changed"] td.drift').get_attribute("class")
    # Only the modified resource has a differences table, row for row what AWS reports.
    diffs = browser.find_elements(By.CSS_SELECTOR, ".drift-diff")
    assert [d.get_attribute("data-logical-id") for d in diffs] == ["Changed"]
    rows = [[td.text for td in r.find_elements(By.TAG_NAME, "td")] for r in diffs[0].find_elements(By.CSS_SELECTOR, "tbody tr")]
    changed = next(d for d in aws if d["LogicalResourceId"] == "Changed")
    assert rows == [[p["PropertyPath"], p["ExpectedValue"], p["ActualValue"], p["DifferenceType"]] for p in changed["PropertyDifferences"]]
    assert rows == [["/VisibilityTimeout", "30", "60", "NOT_EQUAL"]]
    browser.execute_script("document.getElementById('sec-drift').scrollIntoView()")
    shot(browser, "stack-drift")
    # A stack never checked says so and has no drift column.
    cfn = cumulo.client("cloudformation")
    other = f"con-nodrift-{uid()}"
    cfn.create_stack(StackName=other, TemplateBody='{"Resources": {"T": {"Type": "AWS::SNS::Topic"}}}')
    cfn.get_waiter("stack_create_complete").wait(StackName=other, WaiterConfig={"Delay": 1})
    page(browser, cumulo, f"/stacks/{other}")
    assert "not been detected" in wait(browser, "#drift p.empty")[0].text
    assert not browser.find_elements(By.CSS_SELECTOR, "#resources-table td.drift")


COUNT_STREAMS = """
(() => {
  const Native = window.EventSource;
  const streams = { opened: 0, open: new Set() };
  window.__streams = () => [streams.opened, streams.open.size];
  window.EventSource = class extends Native {
    constructor(...args) { super(...args); streams.opened++; streams.open.add(this); }
    close() { streams.open.delete(this); super.close(); }
  };
})();
"""


def test_log_tail_follows_over_the_pages_one_event_stream(browser, cumulo):
    logs = cumulo.client("logs")
    group = f"/con-b-tail/{uid()}"
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="s1")

    def put(message):
        logs.put_log_events(logGroupName=group, logStreamName="s1",
                            logEvents=[{"timestamp": int(time.time() * 1000), "message": message}])

    def shown(message):
        WebDriverWait(browser, 10).until(
            lambda d: any(message == c.text for c in d.find_elements(By.CSS_SELECTOR, "#events-table td.log")))

    put("first line")
    hook = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": COUNT_STREAMS})
    try:
        page(browser, cumulo, f"/logs/{urllib.parse.quote(group, safe='')}?stream=s1")
        shown("first line")
        assert browser.execute_script("return window.__streams()") == [0, 0]
        marker = browser.execute_script("return window.performance.timeOrigin")
        browser.find_element(By.ID, "follow").click()
        WebDriverWait(browser, 10).until(lambda d: "following" in d.find_element(By.ID, "events-status").text)
        second = f"second line {uid()}"
        put(second)
        shown(second)
        # Unfollowed and followed again: still the one stream.
        browser.find_element(By.ID, "follow").click()
        browser.find_element(By.ID, "follow").click()
        third = f"third line {uid()}"
        put(third)
        shown(third)
        assert browser.execute_script("return window.performance.timeOrigin") == marker
        assert browser.execute_script("return window.__streams()") == [1, 1]
        rows = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#events-table td.log")]
        assert rows == ["first line", second, third]
        shot(browser, "log-tail")
        # A group deleted before the first Follow: the refusal shows, the box unticks.
        page(browser, cumulo, f"/logs/{urllib.parse.quote(group, safe='')}?stream=s1")
        shown("first line")
        logs.delete_log_group(logGroupName=group)
        browser.find_element(By.ID, "follow").click()
        WebDriverWait(browser, 10).until(lambda d: "ResourceNotFoundException" in d.find_element(By.ID, "events-status").text)
        assert not browser.find_element(By.ID, "follow").is_selected()
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": hook["identifier"]})


def test_security_groups_and_a_classic_load_balancer(browser, cumulo):
    from console_stacks import network_with_groups

    n = network_with_groups(cumulo)
    ec2 = cumulo.client("ec2")
    # From the VPC view to the app group.
    page(browser, cumulo, f"/ec2/{n['vpc']}")
    rows = {r.get_attribute("data-group-id"): r for r in wait(browser, "#security-groups-table tbody tr", count=3)}
    assert {n["web"], n["app"]} < set(rows)
    rows[n["app"]].find_element(By.LINK_TEXT, n["app"]).click()
    ingress = wait(browser, "#ingress-table tbody tr")
    rules = {r["SecurityGroupRuleId"]: r for r in ec2.describe_security_group_rules(
        Filters=[{"Name": "group-id", "Values": [n["app"]]}])["SecurityGroupRules"]}
    [row] = ingress
    rule = rules[row.get_attribute("data-rule-id")]
    assert [td.text for td in row.find_elements(By.TAG_NAME, "td")] == [rule["SecurityGroupRuleId"], "TCP", "8080", n["web"], "from web"]
    egress = {r.get_attribute("data-rule-id"): [td.text for td in r.find_elements(By.TAG_NAME, "td")]
              for r in browser.find_elements(By.CSS_SELECTOR, "#egress-table tbody tr")}
    assert set(egress) == {k for k, r in rules.items() if r["IsEgress"]}
    assert [n["prefix_list"], "443"] in [[cells[3], cells[2]] for cells in egress.values()]
    shot(browser, "security-group")
    # The referenced group links to its page, which names who references it.
    row.find_element(By.LINK_TEXT, n["web"]).click()
    [ingress] = wait(browser, "#ingress-table tbody tr")
    assert [td.text for td in ingress.find_elements(By.TAG_NAME, "td")][1:] == ["TCP", "443", "0.0.0.0/0", "https"]
    assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#referenced-by a")] == [n["app"]]

    # The classic load balancer: listed, its page with listeners, health check, instances and
    # a link to its security group.
    elb = cumulo.client("elb")
    page(browser, cumulo, "/elb/")
    wait(browser, f'#classic-load-balancers-table tr[data-load-balancer="{n["elb"]}"]')[0].find_element(By.TAG_NAME, "a").click()
    [listener] = wait(browser, "#classic-listeners-table tbody tr")
    assert listener.get_attribute("data-listener") == "HTTP:80"
    assert [td.text for td in listener.find_elements(By.TAG_NAME, "td")][:2] == ["HTTP :80", "HTTP :8080"]
    check = {r.get_attribute("data-key"): r.find_element(By.CSS_SELECTOR, "td.value").text
             for r in browser.find_elements(By.CSS_SELECTOR, "#health-check tbody tr")}
    aws_check = elb.describe_load_balancers(LoadBalancerNames=[n["elb"]])["LoadBalancerDescriptions"][0]["HealthCheck"]
    assert check == {k: str(v) for k, v in aws_check.items()}
    [instance] = browser.find_elements(By.CSS_SELECTOR, "#instances-table tbody tr")
    [state] = elb.describe_instance_health(LoadBalancerName=n["elb"])["InstanceStates"]
    assert instance.get_attribute("data-instance") == n["instance"]
    assert instance.find_elements(By.TAG_NAME, "td")[1].text == state["State"] == "InService"
    shot(browser, "classic-load-balancer")
    browser.find_element(By.CSS_SELECTOR, "#security-groups a").click()
    assert wait(browser, "#ingress-table tbody tr")[0].find_elements(By.TAG_NAME, "td")[3].text == "0.0.0.0/0"
    assert n["web"] in browser.find_element(By.ID, "title").text
    elb.delete_load_balancer(LoadBalancerName=n["elb"])

    # An ECS service in the VPC links to the groups it uses.
    ecs = cumulo.client("ecs")
    cluster = f"con-sg-{uid()}"
    ecs.create_cluster(clusterName=cluster)
    td = ecs.register_task_definition(family=cluster, networkMode="awsvpc", containerDefinitions=[
        {"name": "app", "image": "public.ecr.aws/docker/library/busybox:latest", "memory": 128}])["taskDefinition"]["taskDefinitionArn"]
    ecs.create_service(cluster=cluster, serviceName="api", taskDefinition=td, desiredCount=0, networkConfiguration={
        "awsvpcConfiguration": {"subnets": [n["subnet"]], "securityGroups": [n["app"]]}})
    page(browser, cumulo, f"/ecs/{cluster}")
    link_ = wait(browser, '#services-table tr[data-service="api"] td.security-groups a')[0]
    assert link_.text == n["app"]
    link_.click()
    assert wait(browser, "#ingress-table tbody tr")[0].get_attribute("data-rule-id").startswith("sgr-")
    assert n["app"] in browser.find_element(By.ID, "title").text
    ecs.delete_service(cluster=cluster, service="api")
