"""Custom resources end to end: stacks whose Custom::* / AWS::CloudFormation::CustomResource
resources are served by inline functions (cfnresponse, cfn-response, https.request to the
ResponseURL on port 443, a direct return value) or by an SNS topic, through create, update
(OldResourceProperties, a new physical id and its cleanup), FAILED responses and delete."""
import json
import threading
import urllib.request
import uuid

import botocore.exceptions
import pytest

WAIT = {"Delay": 1, "MaxAttempts": 120}
ROLE = "arn:aws:iam::000000000000:role/lambda-role"


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def sqs(cumulo):
    return cumulo.client("sqs")


def outputs(cfn, name):
    s = cfn.describe_stacks(StackName=name)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in s.get("Outputs", [])}


def failure_reasons(cfn, name):
    return [
        e.get("ResourceStatusReason", "")
        for e in cfn.describe_stack_events(StackName=name)["StackEvents"]
        if e["ResourceStatus"].endswith("FAILED")
    ]


def drain(sqs, url):
    """Every event the handler recorded, oldest first."""
    events = []
    while True:
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
        if not got:
            return events
        for m in got:
            events.append(json.loads(m["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


# Records every request it gets, answers with cfnresponse; the physical id follows Greeting,
# so changing it replaces the resource.
PY_HANDLER = """
import json, os, boto3, cfnresponse
def handler(event, context):
    boto3.client('sqs').send_message(QueueUrl=os.environ['LOG_QUEUE'], MessageBody=json.dumps(event))
    props = event['ResourceProperties']
    if props.get('Fail') == 'true':
        cfnresponse.send(event, context, cfnresponse.FAILED, {}, reason='nope: ' + props['Greeting'])
        return
    data = {'Echo': props.get('Greeting', '') + '!', 'Count': props.get('Count')}
    cfnresponse.send(event, context, cfnresponse.SUCCESS, data, 'thing-' + props.get('Greeting', ''))
"""


def py_stack(queue, props, rtype="Custom::Thing"):
    return json.dumps({
        "Resources": {
            "Handler": {
                "Type": "AWS::Lambda::Function",
                "Properties": {
                    "Runtime": "python3.11",
                    "Handler": "index.handler",
                    "Role": ROLE,
                    "Timeout": 30,
                    "Environment": {"Variables": {"LOG_QUEUE": queue}},
                    "Code": {"ZipFile": PY_HANDLER},
                },
            },
            "Thing": {
                "Type": rtype,
                "Properties": {"ServiceToken": {"Fn::GetAtt": ["Handler", "Arn"]}, **props},
            },
        },
        "Outputs": {
            "Ref": {"Value": {"Ref": "Thing"}},
            "Echo": {"Value": {"Fn::GetAtt": ["Thing", "Echo"]}},
            "Count": {"Value": {"Fn::GetAtt": ["Thing", "Count"]}},
        },
    })


def test_lambda_backed_lifecycle(cfn, sqs):
    queue = sqs.create_queue(QueueName=f"crlog-{uid()}")["QueueUrl"]
    stack = f"cr-{uid()}"
    cfn.create_stack(StackName=stack, TemplateBody=py_stack(queue, {"Greeting": "hi", "Count": 3}))
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    out = outputs(cfn, stack)
    assert out == {"Ref": "thing-hi", "Echo": "hi!", "Count": "3"}
    [create] = drain(sqs, queue)
    assert create["RequestType"] == "Create"
    assert create["ResourceType"] == "Custom::Thing" and create["LogicalResourceId"] == "Thing"
    assert create["StackId"] == cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
    # CloudFormation passes every scalar property as a string, ServiceToken included.
    assert create["ResourceProperties"]["Count"] == "3"
    assert create["ResourceProperties"]["ServiceToken"].startswith("arn:aws:lambda:")
    assert create["ResponseURL"].startswith("http://") and "PhysicalResourceId" not in create

    # An update that keeps the physical id.
    cfn.update_stack(StackName=stack, TemplateBody=py_stack(queue, {"Greeting": "hi", "Count": 4}))
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
    [update] = drain(sqs, queue)
    assert update["RequestType"] == "Update" and update["PhysicalResourceId"] == "thing-hi"
    assert update["OldResourceProperties"]["Count"] == "3"
    assert update["ResourceProperties"]["Count"] == "4"
    assert outputs(cfn, stack)["Count"] == "4"

    # An update answered with a new physical id: the old one gets a Delete in cleanup.
    cfn.update_stack(StackName=stack, TemplateBody=py_stack(queue, {"Greeting": "hello", "Count": 4}))
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
    events = drain(sqs, queue)
    assert [(e["RequestType"], e["PhysicalResourceId"]) for e in events] == [
        ("Update", "thing-hi"),
        ("Delete", "thing-hi"),
    ]
    assert events[1]["ResourceProperties"]["Greeting"] == "hi"
    assert outputs(cfn, stack)["Ref"] == "thing-hello"

    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)
    [delete] = drain(sqs, queue)
    assert delete["RequestType"] == "Delete" and delete["PhysicalResourceId"] == "thing-hello"


def test_failed_response_fails_the_resource(cfn, sqs):
    queue = sqs.create_queue(QueueName=f"crfail-{uid()}")["QueueUrl"]
    stack = f"crf-{uid()}"
    cfn.create_stack(StackName=stack, TemplateBody=py_stack(
        queue, {"Greeting": "boom", "Fail": True}, rtype="AWS::CloudFormation::CustomResource"))
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    reasons = failure_reasons(cfn, stack)
    assert any(
        "Received response status [FAILED] from custom resource. Message returned: nope: boom" in r
        for r in reasons
    ), reasons
    assert drain(sqs, queue)[0]["RequestType"] == "Create"
    stack_id = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)


# The inline Node.js module AWS provides, with NoEcho.
NODE_CFN_RESPONSE = """
const response = require('cfn-response');
exports.handler = (event, context) => {
  response.send(event, context, response.SUCCESS, { Secret: 's3cr3t-' + event.RequestType }, 'node-thing', true);
};
"""

# What the CDK's Provider framework does: https.request to the ResponseURL's host on port 443.
NODE_HTTPS_443 = """
const https = require('https');
const url = require('url');
exports.handler = async (event) => {
  const body = JSON.stringify({
    Status: 'SUCCESS', PhysicalResourceId: 'https-thing', StackId: event.StackId,
    RequestId: event.RequestId, LogicalResourceId: event.LogicalResourceId, Data: { Via: 'https' },
  });
  const parsed = url.parse(event.ResponseURL);
  await new Promise((resolve, reject) => {
    const req = https.request({ hostname: parsed.hostname, port: 443, path: parsed.path, method: 'PUT',
      headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) } }, (res) => { res.resume(); res.on('end', resolve); });
    req.on('error', reject);
    req.write(body);
    req.end();
  });
};
"""

# A handler that returns the response instead of PUTting it.
PY_DIRECT = """
def handler(event, context):
    return {'Status': 'SUCCESS', 'PhysicalResourceId': 'direct-thing', 'StackId': event['StackId'],
            'RequestId': event['RequestId'], 'LogicalResourceId': event['LogicalResourceId'],
            'Data': {'Via': 'return'}}
"""


def fn(runtime, code):
    return {
        "Type": "AWS::Lambda::Function",
        "Properties": {"Runtime": runtime, "Handler": "index.handler", "Role": ROLE,
                       "Code": {"ZipFile": code}},
    }


def test_node_modules_https_and_direct_return(cfn, cumulo):
    stack = f"crn-{uid()}"
    body = json.dumps({
        "Resources": {
            "NodeFn": fn("nodejs20.x", NODE_CFN_RESPONSE),
            "HttpsFn": fn("nodejs24.x", NODE_HTTPS_443),
            "DirectFn": fn("python3.11", PY_DIRECT),
            "Secret": {"Type": "Custom::Secret",
                       "Properties": {"ServiceToken": {"Fn::GetAtt": ["NodeFn", "Arn"]}}},
            "Https": {"Type": "Custom::Https",
                      "Properties": {"ServiceToken": {"Fn::GetAtt": ["HttpsFn", "Arn"]}}},
            "Direct": {"Type": "Custom::Direct",
                       "Properties": {"ServiceToken": {"Fn::GetAtt": ["DirectFn", "Arn"]}}},
            # Data reaches dependents in clear even when NoEcho masks what is written down.
            "Param": {"Type": "AWS::SSM::Parameter",
                      "Properties": {"Type": "String", "Value": {"Fn::GetAtt": ["Secret", "Secret"]}}},
        },
        "Outputs": {
            "Secret": {"Value": {"Ref": "Secret"}},
            "Https": {"Value": {"Fn::GetAtt": ["Https", "Via"]}},
            "HttpsRef": {"Value": {"Ref": "Https"}},
            "Direct": {"Value": {"Fn::GetAtt": ["Direct", "Via"]}},
            "Param": {"Value": {"Ref": "Param"}},
        },
    })
    cfn.create_stack(StackName=stack, TemplateBody=body)
    try:
        cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    except botocore.exceptions.WaiterError:
        pytest.fail(f"stack failed: {failure_reasons(cfn, stack)}")
    out = outputs(cfn, stack)
    assert out["Secret"] == "node-thing"
    assert (out["Https"], out["HttpsRef"]) == ("https", "https-thing")
    assert out["Direct"] == "return"
    ssm = cumulo.client("ssm")
    assert ssm.get_parameter(Name=out["Param"])["Parameter"]["Value"] == "s3cr3t-Create"
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)


def test_sns_backed_custom_resource(cfn, cumulo, sqs):
    sns = cumulo.client("sns")
    topic = sns.create_topic(Name=f"crtopic-{uid()}")["TopicArn"]
    queue = sqs.create_queue(QueueName=f"crsns-{uid()}")["QueueUrl"]
    qarn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=qarn, Attributes={"RawMessageDelivery": "true"})
    seen = []

    def responder(count):
        # Plays the topic's subscriber: reads each request and PUTs the response.
        while len(seen) < count:
            for m in sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1).get("Messages", []):
                sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])
                event = json.loads(m["Body"])
                seen.append(event)
                answer = json.dumps({
                    "Status": "SUCCESS", "PhysicalResourceId": "sns-thing", "StackId": event["StackId"],
                    "RequestId": event["RequestId"], "LogicalResourceId": event["LogicalResourceId"],
                    "Data": {"Kind": event["RequestType"]},
                }).encode()
                req = urllib.request.Request(event["ResponseURL"], data=answer, method="PUT")
                urllib.request.urlopen(req).read()

    stack = f"crs-{uid()}"
    body = json.dumps({
        "Resources": {"Thing": {"Type": "Custom::Sns", "Properties": {"ServiceToken": topic, "Size": 1}}},
        "Outputs": {"Kind": {"Value": {"Fn::GetAtt": ["Thing", "Kind"]}}},
    })
    t = threading.Thread(target=responder, args=(1,), daemon=True)
    t.start()
    cfn.create_stack(StackName=stack, TemplateBody=body)
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    t.join(timeout=30)
    assert outputs(cfn, stack)["Kind"] == "Create"
    t = threading.Thread(target=responder, args=(2,), daemon=True)
    t.start()
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)
    t.join(timeout=30)
    assert [e["RequestType"] for e in seen] == ["Create", "Delete"]


def test_response_url_accepts_one_answer(cumulo):
    r = cumulo.raw("PUT", "/_cumulo/cfn-response/unknown-token", body=b"{}")
    assert r.status == 403 and r.error_code() == "AccessDenied"
