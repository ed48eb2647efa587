"""CloudFormation end to end: stacks provisioned for real in S3, SQS, SNS and SSM, checked through
each service's own API after every phase, with boto3 (and its waiters) and the AWS CLI."""
import json
import os
import subprocess
import time
import uuid

import botocore.exceptions
import pytest
from conftest import CREDS

WAIT = {"Delay": 1, "MaxAttempts": 60}


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def sqs(cumulo):
    return cumulo.client("sqs")


@pytest.fixture(scope="module")
def sns(cumulo):
    return cumulo.client("sns")


@pytest.fixture(scope="module")
def ssm(cumulo):
    return cumulo.client("ssm")


@pytest.fixture(scope="module")
def s3(cumulo):
    return cumulo.client("s3")


def stack(cfn, name):
    return cfn.describe_stacks(StackName=name)["Stacks"][0]


def outputs(cfn, name):
    return {o["OutputKey"]: o["OutputValue"] for o in stack(cfn, name).get("Outputs", [])}


def resources(cfn, name):
    return {
        r["LogicalResourceId"]: r
        for r in cfn.describe_stack_resources(StackName=name)["StackResources"]
    }


def create(cfn, name, body, **kw):
    cfn.create_stack(StackName=name, TemplateBody=body, **kw)
    cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=WAIT)
    return stack(cfn, name)


def update(cfn, name, body, **kw):
    cfn.update_stack(StackName=name, TemplateBody=body, **kw)
    cfn.get_waiter("stack_update_complete").wait(StackName=name, WaiterConfig=WAIT)
    return stack(cfn, name)


def delete(cfn, name):
    stack_id = stack(cfn, name)["StackId"]
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    return stack_id


def queue_attrs(sqs, url):
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]


def queue_exists(sqs, name):
    try:
        sqs.get_queue_url(QueueName=name)
        return True
    except botocore.exceptions.ClientError:
        return False


def receive_one(sqs, url):
    for _ in range(20):
        got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
        if got:
            return got[0]
    raise AssertionError(f"no message arrived in {url}")


def every_provider_template(p, visibility=30, param_value="v1", queue_name=None, versioning="Enabled", cors=True, display="Alerts"):
    queue_name = queue_name or f"{p}-work"
    bucket = {
        "Type": "AWS::S3::Bucket",
        "Properties": {
            "BucketName": f"{p}-bucket",
            "VersioningConfiguration": {"Status": versioning},
            "BucketEncryption": {
                "ServerSideEncryptionConfiguration": [
                    {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/mykey"}}
                ]
            },
            "LifecycleConfiguration": {
                "Rules": [{"Id": "expire-logs", "Status": "Enabled", "Prefix": "logs/", "ExpirationInDays": 7}]
            },
            "WebsiteConfiguration": {"IndexDocument": "index.html", "ErrorDocument": "error.html"},
            "PublicAccessBlockConfiguration": {
                "BlockPublicAcls": True,
                "BlockPublicPolicy": False,
                "IgnorePublicAcls": True,
                "RestrictPublicBuckets": False,
            },
            "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerPreferred"}]},
            "Tags": [{"Key": "team", "Value": "data"}],
        },
    }
    if cors:
        bucket["Properties"]["CorsConfiguration"] = {
            "CorsRules": [{"AllowedMethods": ["GET", "PUT"], "AllowedOrigins": ["https://example.com"], "MaxAge": 600}]
        }
    return json.dumps(
        {
            "AWSTemplateFormatVersion": "2010-09-09",
            "Parameters": {"Env": {"Type": "String", "Default": "dev"}},
            "Resources": {
                "Bucket": bucket,
                "BucketPolicy": {
                    "Type": "AWS::S3::BucketPolicy",
                    "Properties": {
                        "Bucket": {"Ref": "Bucket"},
                        "PolicyDocument": {
                            "Version": "2012-10-17",
                            "Statement": [
                                {
                                    "Effect": "Allow",
                                    "Principal": "*",
                                    "Action": "s3:GetObject",
                                    "Resource": {"Fn::Sub": "${Bucket.Arn}/*"},
                                }
                            ],
                        },
                    },
                },
                "DeadLetters": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{p}-dlq"}},
                "Work": {
                    "Type": "AWS::SQS::Queue",
                    "Properties": {
                        "QueueName": queue_name,
                        "VisibilityTimeout": visibility,
                        "MessageRetentionPeriod": 3600,
                        "RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": ["DeadLetters", "Arn"]}, "maxReceiveCount": 4},
                        "Tags": [{"Key": "env", "Value": {"Ref": "Env"}}],
                    },
                },
                "Raw": {"Type": "AWS::SQS::Queue"},
                "QueuePolicy": {
                    "Type": "AWS::SQS::QueuePolicy",
                    "Properties": {
                        "Queues": [{"Ref": "Work"}, {"Ref": "Raw"}],
                        "PolicyDocument": {
                            "Version": "2012-10-17",
                            "Statement": [
                                {
                                    "Effect": "Allow",
                                    "Principal": {"Service": "sns.amazonaws.com"},
                                    "Action": "sqs:SendMessage",
                                    "Resource": "*",
                                }
                            ],
                        },
                    },
                },
                "Topic": {
                    "Type": "AWS::SNS::Topic",
                    "Properties": {
                        "DisplayName": display,
                        "Subscription": [{"Protocol": "sqs", "Endpoint": {"Fn::GetAtt": ["Work", "Arn"]}}],
                    },
                },
                "RawSubscription": {
                    "Type": "AWS::SNS::Subscription",
                    "Properties": {
                        "TopicArn": {"Ref": "Topic"},
                        "Protocol": "sqs",
                        "Endpoint": {"Fn::GetAtt": ["Raw", "Arn"]},
                        "RawMessageDelivery": True,
                    },
                },
                "TopicPolicy": {
                    "Type": "AWS::SNS::TopicPolicy",
                    "Properties": {
                        "Topics": [{"Ref": "Topic"}],
                        "PolicyDocument": {
                            "Statement": [
                                {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sns:Publish", "Resource": {"Ref": "Topic"}}
                            ]
                        },
                    },
                },
                "Param": {
                    "Type": "AWS::SSM::Parameter",
                    "Properties": {"Name": f"/{p}/config", "Type": "String", "Value": param_value},
                },
            },
            "Outputs": {
                "BucketArn": {"Value": {"Fn::GetAtt": ["Bucket", "Arn"]}},
                "BucketDomain": {"Value": {"Fn::GetAtt": ["Bucket", "RegionalDomainName"]}},
                "WebsiteURL": {"Value": {"Fn::GetAtt": ["Bucket", "WebsiteURL"]}},
                "QueueUrl": {"Value": {"Ref": "Work"}},
                "QueueArn": {"Value": {"Fn::GetAtt": ["Work", "Arn"]}},
                "QueueName": {"Value": {"Fn::GetAtt": ["Work", "QueueName"]}},
                "RawUrl": {"Value": {"Fn::GetAtt": ["Raw", "QueueUrl"]}},
                "TopicArn": {"Value": {"Ref": "Topic"}},
                "TopicName": {"Value": {"Fn::GetAtt": ["Topic", "TopicName"]}},
                "ParamValue": {"Value": {"Fn::GetAtt": ["Param", "Value"]}},
                "ParamType": {"Value": {"Fn::GetAtt": ["Param", "Type"]}},
            },
        }
    )


def test_every_provider_create_update_in_place_replace_and_delete(cfn, sqs, sns, ssm, s3):
    p = f"all-{uid()}"
    name = f"{p}-stack"
    s = create(cfn, name, every_provider_template(p))
    assert s["StackStatus"] == "CREATE_COMPLETE"
    out = outputs(cfn, name)
    res = resources(cfn, name)
    assert all(r["ResourceStatus"] == "CREATE_COMPLETE" for r in res.values()), res

    # S3: the bucket and every configuration.
    bucket = f"{p}-bucket"
    assert res["Bucket"]["PhysicalResourceId"] == bucket
    assert out["BucketArn"] == f"arn:aws:s3:::{bucket}"
    assert out["BucketDomain"] == f"{bucket}.s3.us-east-1.amazonaws.com"
    assert out["WebsiteURL"] == f"http://{bucket}.s3-website-us-east-1.amazonaws.com"
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    rule = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
    assert rule["ApplyServerSideEncryptionByDefault"] == {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/mykey"}
    life = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"][0]
    assert life["ID"] == "expire-logs" and life["Expiration"]["Days"] == 7
    cors = s3.get_bucket_cors(Bucket=bucket)["CORSRules"][0]
    assert cors["AllowedMethods"] == ["GET", "PUT"] and cors["MaxAgeSeconds"] == 600
    assert s3.get_bucket_website(Bucket=bucket)["IndexDocument"] == {"Suffix": "index.html"}
    pab = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
    assert pab == {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": False, "RestrictPublicBuckets": False}
    own = s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"][0]
    assert own["ObjectOwnership"] == "BucketOwnerPreferred"
    assert {"Key": "team", "Value": "data"} in s3.get_bucket_tagging(Bucket=bucket)["TagSet"]
    policy = json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"])
    assert policy["Statement"][0]["Resource"] == f"arn:aws:s3:::{bucket}/*"

    # SQS: physical id is the URL; every property became an attribute.
    url = out["QueueUrl"]
    assert res["Work"]["PhysicalResourceId"] == url
    assert url.endswith(f"/{p}-work")
    assert out["QueueName"] == f"{p}-work"
    a = queue_attrs(sqs, url)
    assert a["QueueArn"] == out["QueueArn"]
    assert a["VisibilityTimeout"] == "30" and a["MessageRetentionPeriod"] == "3600"
    assert json.loads(a["RedrivePolicy"]) == {
        "deadLetterTargetArn": f"arn:aws:sqs:us-east-1:000000000000:{p}-dlq",
        "maxReceiveCount": 4,
    }
    assert "sqs:SendMessage" in a["Policy"]
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"]["env"] == "dev"
    # A queue without a name gets CloudFormation's generated one.
    assert f"/{name}-Raw-" in out["RawUrl"]

    # SNS: the topic delivers to both subscribed queues.
    topic = out["TopicArn"]
    assert topic.startswith(f"arn:aws:sns:us-east-1:000000000000:{name}-Topic-")
    assert out["TopicName"] == topic.rsplit(":", 1)[1]
    tattrs = sns.get_topic_attributes(TopicArn=topic)["Attributes"]
    assert tattrs["DisplayName"] == "Alerts"
    assert '"AWS":"*"' in tattrs["Policy"].replace(" ", "")
    sns.publish(TopicArn=topic, Message="hello from the stack")
    assert json.loads(receive_one(sqs, url)["Body"])["Message"] == "hello from the stack"
    assert receive_one(sqs, out["RawUrl"])["Body"] == "hello from the stack"

    # SSM.
    assert ssm.get_parameter(Name=f"/{p}/config")["Parameter"]["Value"] == "v1"
    assert (out["ParamValue"], out["ParamType"]) == ("v1", "String")

    # Update in place: same physical ids, new settings.
    update(cfn, name, every_provider_template(p, visibility=90, param_value="v2", versioning="Suspended", cors=False, display="Renamed"))
    res2 = resources(cfn, name)
    assert {k: r["PhysicalResourceId"] for k, r in res2.items()} == {k: r["PhysicalResourceId"] for k, r in res.items()}
    assert queue_attrs(sqs, url)["VisibilityTimeout"] == "90"
    p2 = ssm.get_parameter(Name=f"/{p}/config")["Parameter"]
    assert (p2["Value"], p2["Version"]) == ("v2", 2)
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_bucket_cors(Bucket=bucket)
    assert e.value.response["Error"]["Code"] == "NoSuchCORSConfiguration"
    assert sns.get_topic_attributes(TopicArn=topic)["Attributes"]["DisplayName"] == "Renamed"
    assert outputs(cfn, name)["ParamValue"] == "v2"

    # Update by replacement: a new QueueName makes a new queue and removes the old one.
    update(cfn, name, every_provider_template(p, visibility=90, param_value="v2", queue_name=f"{p}-work2", versioning="Suspended", cors=False, display="Renamed"))
    new_url = outputs(cfn, name)["QueueUrl"]
    assert new_url != url and new_url.endswith(f"/{p}-work2")
    assert queue_attrs(sqs, new_url)["VisibilityTimeout"] == "90"
    assert not queue_exists(sqs, f"{p}-work")
    subs = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    assert any(s["Endpoint"].endswith(f":{p}-work2") for s in subs), subs

    # Delete: everything goes, through each service.
    stack_id = delete(cfn, name)
    assert cfn.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"
    with pytest.raises(botocore.exceptions.ClientError):
        s3.head_bucket(Bucket=bucket)
    assert not queue_exists(sqs, f"{p}-work2") and not queue_exists(sqs, f"{p}-dlq")
    with pytest.raises(botocore.exceptions.ClientError):
        sns.get_topic_attributes(TopicArn=topic)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ssm.get_parameter(Name=f"/{p}/config")
    assert e.value.response["Error"]["Code"] == "ParameterNotFound"


def test_failed_resource_rolls_back_what_was_created(cfn, sqs, ssm):
    p = f"rb-{uid()}"
    body = json.dumps(
        {
            "Resources": {
                "Param": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{p}/p", "Type": "String", "Value": "x"}},
                "Good": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{p}-good"}},
                "Bad": {
                    "Type": "AWS::SQS::Queue",
                    "DependsOn": ["Param", "Good"],
                    "Properties": {"QueueName": f"{p}-bad", "VisibilityTimeout": 999999},
                },
            }
        }
    )
    cfn.create_stack(StackName=p, TemplateBody=body)
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    s = stack(cfn, p)
    assert s["StackStatus"] == "ROLLBACK_COMPLETE"
    assert not queue_exists(sqs, f"{p}-good") and not queue_exists(sqs, f"{p}-bad")
    with pytest.raises(botocore.exceptions.ClientError):
        ssm.get_parameter(Name=f"/{p}/p")
    events = cfn.describe_stack_events(StackName=p)["StackEvents"]
    failed = [e for e in events if e["LogicalResourceId"] == "Bad" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert failed and "VisibilityTimeout" in failed[0]["ResourceStatusReason"], failed
    deleted = {e["LogicalResourceId"] for e in events if e["ResourceStatus"] == "DELETE_COMPLETE"}
    assert {"Param", "Good"} <= deleted
    assert all(e["ClientRequestToken"] for e in events)
    # ROLLBACK_COMPLETE is delete-only.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.update_stack(StackName=p, TemplateBody=body)
    assert e.value.response["Error"]["Code"] == "ValidationError"
    delete(cfn, p)


def test_unsupported_bucket_property_fails_naming_it(cfn, s3):
    p = f"un-{uid()}"
    body = json.dumps(
        {"Resources": {"B": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": f"{p}-b", "AccelerateConfiguration": {"AccelerationStatus": "Enabled"}}}}}
    )
    cfn.create_stack(StackName=p, TemplateBody=body)
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    events = cfn.describe_stack_events(StackName=p)["StackEvents"]
    reason = next(e["ResourceStatusReason"] for e in events if e["LogicalResourceId"] == "B" and e["ResourceStatus"] == "CREATE_FAILED")
    assert "AccelerateConfiguration" in reason and "not supported" in reason
    with pytest.raises(botocore.exceptions.ClientError):
        s3.head_bucket(Bucket=f"{p}-b")
    delete(cfn, p)


def test_bucket_replication_configuration_is_performed(cfn, s3):
    p = f"repl-{uid()}"
    versioned = {"VersioningConfiguration": {"Status": "Enabled"}}
    body = json.dumps({"Resources": {
        "Dest": {"Type": "AWS::S3::Bucket", "Properties": dict(versioned, BucketName=f"{p}-dst")},
        "Source": {"Type": "AWS::S3::Bucket", "Properties": dict(versioned, BucketName=f"{p}-src", ReplicationConfiguration={
            "Role": "arn:aws:iam::000000000000:role/replication",
            "Rules": [{"Id": "all", "Status": "Enabled", "Prefix": "",
                       "Destination": {"Bucket": {"Fn::GetAtt": ["Dest", "Arn"]}, "StorageClass": "GLACIER"}}]})},
    }})
    create(cfn, p, body)
    rule = s3.get_bucket_replication(Bucket=f"{p}-src")["ReplicationConfiguration"]["Rules"][0]
    assert rule["Destination"] == {"Bucket": f"arn:aws:s3:::{p}-dst", "StorageClass": "GLACIER"}
    s3.put_object(Bucket=f"{p}-src", Key="k", Body=b"v")
    replica = s3.head_object(Bucket=f"{p}-dst", Key="k")
    assert (replica["ReplicationStatus"], replica["StorageClass"]) == ("REPLICA", "GLACIER")
    assert s3.head_object(Bucket=f"{p}-src", Key="k")["ReplicationStatus"] == "COMPLETED"
    for b in (f"{p}-src", f"{p}-dst"):
        for v in s3.list_object_versions(Bucket=b).get("Versions", []):
            s3.delete_object(Bucket=b, Key=v["Key"], VersionId=v["VersionId"])
    delete(cfn, p)


def test_change_sets_create_and_update(cfn, sqs, ssm):
    p = f"cs-{uid()}"
    v1 = json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{p}-q", "DelaySeconds": 0}}}})
    role = "arn:aws:iam::000000000000:role/cs-exec"
    cs = cfn.create_change_set(StackName=p, ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=v1, RoleARN=role)
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=cs["Id"], WaiterConfig=WAIT)
    assert stack(cfn, p)["StackStatus"] == "REVIEW_IN_PROGRESS"
    d = cfn.describe_change_set(StackName=p, ChangeSetName="first")
    assert d["ExecutionStatus"] == "AVAILABLE" and d["Status"] == "CREATE_COMPLETE"
    changes = [c["ResourceChange"] for c in d["Changes"]]
    assert [(c["Action"], c["LogicalResourceId"], c["ResourceType"]) for c in changes] == [("Add", "Q", "AWS::SQS::Queue")]
    assert not queue_exists(sqs, f"{p}-q"), "nothing is created before execution"
    names = [s["ChangeSetName"] for s in cfn.list_change_sets(StackName=p)["Summaries"]]
    assert names == ["first"]
    cfn.execute_change_set(StackName=p, ChangeSetName="first")
    cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    assert queue_exists(sqs, f"{p}-q")
    assert stack(cfn, p)["RoleARN"] == role  # the change set's role became the stack's

    v2 = json.dumps(
        {
            "Resources": {
                "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{p}-q", "DelaySeconds": 5}},
                "P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{p}", "Type": "String", "Value": "x"}},
            }
        }
    )
    role2 = "arn:aws:iam::000000000000:role/cs-exec-2"
    cfn.create_change_set(StackName=p, ChangeSetName="second", TemplateBody=v2, RoleARN=role2)
    cfn.get_waiter("change_set_create_complete").wait(StackName=p, ChangeSetName="second", WaiterConfig=WAIT)
    d = cfn.describe_change_set(StackName=p, ChangeSetName="second")
    by_id = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in d["Changes"]}
    assert by_id["P"]["Action"] == "Add"
    assert by_id["Q"]["Action"] == "Modify" and by_id["Q"]["Replacement"] == "False"
    assert "Properties" in by_id["Q"]["Scope"]
    assert any(x["Target"].get("Name") == "DelaySeconds" for x in by_id["Q"]["Details"]), by_id["Q"]

    v3 = v2.replace(f'"{p}-q"', f'"{p}-q2"')
    cfn.create_change_set(StackName=p, ChangeSetName="third", TemplateBody=v3)
    cfn.get_waiter("change_set_create_complete").wait(StackName=p, ChangeSetName="third", WaiterConfig=WAIT)
    q = next(c["ResourceChange"] for c in cfn.describe_change_set(StackName=p, ChangeSetName="third")["Changes"])
    assert q["Action"] == "Modify" and q["Replacement"] == "True"
    cfn.delete_change_set(StackName=p, ChangeSetName="third")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.describe_change_set(StackName=p, ChangeSetName="third")
    assert e.value.response["Error"]["Code"] == "ChangeSetNotFound"

    # A change set not yet executed holds its name.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_change_set(StackName=p, ChangeSetName="second", TemplateBody=v3)
    assert e.value.response["Error"]["Code"] == "AlreadyExistsException"

    cfn.execute_change_set(StackName=p, ChangeSetName="second")
    cfn.get_waiter("stack_update_complete").wait(StackName=p, WaiterConfig=WAIT)
    assert stack(cfn, p)["RoleARN"] == role2
    assert queue_attrs(sqs, sqs.get_queue_url(QueueName=f"{p}-q")["QueueUrl"])["DelaySeconds"] == "5"
    assert ssm.get_parameter(Name=f"/{p}")["Parameter"]["Value"] == "x"

    # An executed one gives its name up, as on AWS (the AWS CLI's deploy names change sets after
    # the current second, so two quick deploys reuse a name).
    v4 = v2.replace('"DelaySeconds": 5', '"DelaySeconds": 6')
    again = cfn.create_change_set(StackName=p, ChangeSetName="second", TemplateBody=v4)
    cfn.get_waiter("change_set_create_complete").wait(StackName=p, ChangeSetName="second", WaiterConfig=WAIT)
    d = cfn.describe_change_set(StackName=p, ChangeSetName="second")
    assert d["ChangeSetId"] == again["Id"] and d["ExecutionStatus"] == "AVAILABLE"
    assert [c["ResourceChange"]["LogicalResourceId"] for c in d["Changes"]] == ["Q"]
    cfn.execute_change_set(StackName=p, ChangeSetName="second")
    cfn.get_waiter("stack_update_complete").wait(StackName=p, WaiterConfig=WAIT)
    assert queue_attrs(sqs, sqs.get_queue_url(QueueName=f"{p}-q")["QueueUrl"])["DelaySeconds"] == "6"
    delete(cfn, p)


def test_exports_imports_and_refusal_to_delete_an_export_in_use(cfn, sqs, ssm):
    p = f"ex-{uid()}"
    producer = json.dumps(
        {
            "Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
            "Outputs": {"Arn": {"Value": {"Fn::GetAtt": ["Q", "Arn"]}, "Export": {"Name": f"{p}-queue-arn"}}},
        }
    )
    consumer = json.dumps(
        {
            "Resources": {
                "P": {
                    "Type": "AWS::SSM::Parameter",
                    "Properties": {"Name": f"/{p}/arn", "Type": "String", "Value": {"Fn::ImportValue": f"{p}-queue-arn"}},
                }
            }
        }
    )
    create(cfn, f"{p}-producer", producer)
    arn = outputs(cfn, f"{p}-producer")["Arn"]
    exports = {e["Name"]: e for e in cfn.list_exports()["Exports"]}
    assert exports[f"{p}-queue-arn"]["Value"] == arn
    assert exports[f"{p}-queue-arn"]["ExportingStackId"] == stack(cfn, f"{p}-producer")["StackId"]
    create(cfn, f"{p}-consumer", consumer)
    assert ssm.get_parameter(Name=f"/{p}/arn")["Parameter"]["Value"] == arn
    assert cfn.list_imports(ExportName=f"{p}-queue-arn")["Imports"] == [f"{p}-consumer"]

    # A second stack exporting the same name is refused.
    cfn.create_stack(StackName=f"{p}-dup", TemplateBody=producer)
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=f"{p}-dup", WaiterConfig=WAIT)

    # The producer cannot be deleted while the export is imported.
    refused = False
    try:
        cfn.delete_stack(StackName=f"{p}-producer")
    except botocore.exceptions.ClientError as e:
        refused = True
        assert "in use" in e.response["Error"]["Message"]
    if not refused:
        for _ in range(30):
            s = stack(cfn, f"{p}-producer")
            if not s["StackStatus"].endswith("IN_PROGRESS"):
                break
            time.sleep(0.5)
        # AWS puts the stack back where it was and says why.
        assert s["StackStatus"] == "CREATE_COMPLETE"
        assert s.get("StackStatusReason") == f"Export {p}-queue-arn cannot be deleted as it is in use by {p}-consumer"
    assert queue_exists(sqs, arn.rsplit(":", 1)[1])

    delete(cfn, f"{p}-consumer")
    delete(cfn, f"{p}-producer")
    assert not queue_exists(sqs, arn.rsplit(":", 1)[1])
    assert f"{p}-queue-arn" not in {e["Name"] for e in cfn.list_exports()["Exports"]}


@pytest.mark.parametrize("form", ["path", "virtual"])
def test_nested_stack_from_template_url_in_emulated_s3(cumulo, cfn, s3, sqs, form):
    p = f"ns{form[0]}-{uid()}"
    bucket = f"{p}-templates"
    s3.create_bucket(Bucket=bucket)
    child = json.dumps(
        {
            "Parameters": {"Name": {"Type": "String"}},
            "Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Ref": "Name"}}}},
            "Outputs": {"Url": {"Value": {"Ref": "Q"}}},
        }
    )
    s3.put_object(Bucket=bucket, Key="child/queue.json", Body=child.encode())
    url = (
        f"{cumulo.endpoint}/{bucket}/child/queue.json"
        if form == "path"
        else f"https://{bucket}.s3.amazonaws.com/child/queue.json"
    )
    parent = json.dumps(
        {
            "Resources": {
                "Child": {
                    "Type": "AWS::CloudFormation::Stack",
                    "Properties": {"TemplateURL": url, "Parameters": {"Name": f"{p}-child-q"}},
                }
            },
            "Outputs": {"ChildUrl": {"Value": {"Fn::GetAtt": ["Child", "Outputs.Url"]}}},
        }
    )
    create(cfn, p, parent)
    assert outputs(cfn, p)["ChildUrl"].endswith(f"/{p}-child-q")
    assert queue_exists(sqs, f"{p}-child-q")
    child_id = resources(cfn, p)["Child"]["PhysicalResourceId"]
    c = cfn.describe_stacks(StackName=child_id)["Stacks"][0]
    assert c["ParentId"] == stack(cfn, p)["StackId"]
    delete(cfn, p)
    assert not queue_exists(sqs, f"{p}-child-q")
    assert cfn.describe_stacks(StackName=child_id)["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"


def test_dynamic_references_to_ssm(cfn, ssm, sqs):
    p = f"dr-{uid()}"
    ssm.put_parameter(Name=f"/{p}/visibility", Value="77", Type="String")
    ssm.put_parameter(Name=f"/{p}/secret", Value="s3cr3t", Type="SecureString")
    body = json.dumps(
        {
            "Resources": {
                "Q": {
                    "Type": "AWS::SQS::Queue",
                    "Properties": {"QueueName": f"{p}-q", "VisibilityTimeout": f"{{{{resolve:ssm:/{p}/visibility}}}}"},
                },
                "Copy": {
                    "Type": "AWS::SSM::Parameter",
                    "Properties": {"Name": f"/{p}/copy", "Type": "String", "Value": f"{{{{resolve:ssm-secure:/{p}/secret}}}}"},
                },
            }
        }
    )
    create(cfn, p, body)
    url = sqs.get_queue_url(QueueName=f"{p}-q")["QueueUrl"]
    assert queue_attrs(sqs, url)["VisibilityTimeout"] == "77"
    assert ssm.get_parameter(Name=f"/{p}/copy")["Parameter"]["Value"] == "s3cr3t"
    # The literal reference is what the stack keeps.
    tpl = cfn.get_template(StackName=p)["TemplateBody"]
    assert f"{{{{resolve:ssm:/{p}/visibility}}}}" in json.dumps(tpl)
    assert "s3cr3t" not in json.dumps(tpl)
    delete(cfn, p)

    bad = json.dumps(
        {"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{p}-x", "VisibilityTimeout": "{{resolve:secretsmanager:nope:SecretString:v}}"}}}}
    )
    cfn.create_stack(StackName=f"{p}-sm", TemplateBody=bad)
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=f"{p}-sm", WaiterConfig=WAIT)
    events = cfn.describe_stack_events(StackName=f"{p}-sm")["StackEvents"]
    reason = next(e["ResourceStatusReason"] for e in events if e["LogicalResourceId"] == "Q" and e["ResourceStatus"] == "CREATE_FAILED")
    assert "Secrets Manager" in reason
    assert not queue_exists(sqs, f"{p}-x")


def test_stub_type_says_nothing_was_created(cfn):
    p = f"stub-{uid()}"
    body = json.dumps({"Resources": {"Vpc": {"Type": "AWS::Redshift::Cluster", "Properties": {"CidrBlock": "10.0.0.0/16"}}}})
    create(cfn, p, body)
    r = resources(cfn, p)["Vpc"]
    assert r["ResourceStatus"] == "CREATE_COMPLETE"
    assert r["ResourceStatusReason"] == "cumulo: AWS::Redshift::Cluster is not emulated; nothing was created"
    delete(cfn, p)


def test_unimplemented_operation_answers_501(cfn, cumulo):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.list_stack_sets()
    err = e.value.response
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 501
    assert err["Error"]["Code"] == "NotImplemented"
    assert "ListStackSets" in err["Error"]["Message"]
    r = cumulo.raw(
        "POST",
        "/",
        [("Content-Type", "application/x-www-form-urlencoded")],
        b"Action=NoSuchThing&Version=2010-05-15",
    )
    assert r.status == 400 and r.error_code() == "InvalidAction"


def test_missing_stack_and_missing_member_errors(cfn):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.describe_stacks(StackName="never-created-stack")
    assert e.value.response["Error"]["Code"] == "ValidationError"
    assert e.value.response["Error"]["Message"] == "Stack with id never-created-stack does not exist"


def test_validate_template_and_summary(cfn):
    body = json.dumps(
        {
            "Description": "demo",
            "Parameters": {"Size": {"Type": "Number", "Default": "3", "Description": "how many"}},
            "Resources": {"Q": {"Type": "AWS::SQS::Queue"}, "T": {"Type": "AWS::SNS::Topic"}},
        }
    )
    v = cfn.validate_template(TemplateBody=body)
    assert v["Description"] == "demo"
    assert v["Parameters"] == [{"ParameterKey": "Size", "DefaultValue": "3", "NoEcho": False, "Description": "how many"}]
    s = cfn.get_template_summary(TemplateBody=body)
    assert sorted(s["ResourceTypes"]) == ["AWS::SNS::Topic", "AWS::SQS::Queue"]
    assert s["Parameters"][0]["ParameterType"] == "Number"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.validate_template(TemplateBody="{not a template")
    assert e.value.response["Error"]["Code"] == "ValidationError"


def test_aws_cli_deploy_with_overrides_and_no_execute(cumulo, sqs, tmp_path):
    p = f"cli-{uid()}"
    tpl = tmp_path / "t.yaml"
    tpl.write_text(
        "Parameters:\n"
        "  Delay:\n"
        "    Type: Number\n"
        "    Default: 0\n"
        "Resources:\n"
        "  Q:\n"
        "    Type: AWS::SQS::Queue\n"
        "    Properties:\n"
        f"      QueueName: {p}-q\n"
        "      DelaySeconds: !Ref Delay\n"
        "Outputs:\n"
        "  Url:\n"
        "    Value: !Ref Q\n"
    )
    proc = cumulo.aws(
        "cloudformation", "deploy", "--stack-name", p, "--template-file", str(tpl),
        "--parameter-overrides", "Delay=3", "--no-execute-changeset", check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert not queue_exists(sqs, f"{p}-q")
    st = cumulo.aws("cloudformation", "describe-stacks", "--stack-name", p)["Stacks"][0]
    assert st["StackStatus"] == "REVIEW_IN_PROGRESS"
    sets = cumulo.aws("cloudformation", "list-change-sets", "--stack-name", p)["Summaries"]
    assert len(sets) == 1 and sets[0]["ExecutionStatus"] == "AVAILABLE"

    proc = cumulo.aws(
        "cloudformation", "deploy", "--stack-name", p, "--template-file", str(tpl),
        "--parameter-overrides", "Delay=3", check=False,
    )
    assert proc.returncode == 0, proc.stderr
    url = sqs.get_queue_url(QueueName=f"{p}-q")["QueueUrl"]
    assert queue_attrs(sqs, url)["DelaySeconds"] == "3"

    proc = cumulo.aws(
        "cloudformation", "deploy", "--stack-name", p, "--template-file", str(tpl),
        "--parameter-overrides", "Delay=8", check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert queue_attrs(sqs, url)["DelaySeconds"] == "8"
    st = cumulo.aws("cloudformation", "describe-stacks", "--stack-name", p)["Stacks"][0]
    assert st["StackStatus"] == "UPDATE_COMPLETE"
    assert {"ParameterKey": "Delay", "ParameterValue": "8"} in st["Parameters"]
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", p)
    cumulo.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", st["StackId"])
    assert not queue_exists(sqs, f"{p}-q")


def test_aws_cli_redeploys_a_template_without_parameters(cumulo, sqs, tmp_path):
    # The CLI reads GetTemplateSummary's Parameters on every deploy of an existing stack.
    p = f"nop-{uid()}"
    tpl = tmp_path / "t.yaml"
    for delay in (1, 4):
        tpl.write_text(
            "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n"
            f"      QueueName: {p}-q\n      DelaySeconds: {delay}\n"
        )
        proc = cumulo.aws(
            "cloudformation", "deploy", "--stack-name", p, "--template-file", str(tpl), check=False
        )
        assert proc.returncode == 0, proc.stderr
        url = sqs.get_queue_url(QueueName=f"{p}-q")["QueueUrl"]
        assert queue_attrs(sqs, url)["DelaySeconds"] == str(delay)
    summary = cumulo.client("cloudformation").get_template_summary(StackName=p)
    assert summary["Parameters"] == []
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", p)


def test_strict_server_fails_a_type_without_a_provider():
    from conftest import CumuloServer

    server = CumuloServer(extra_args=["--strict"]).start()
    try:
        cfn = server.client("cloudformation")
        body = json.dumps({"Resources": {"Vpc": {"Type": "AWS::Redshift::Cluster", "Properties": {"CidrBlock": "10.0.0.0/16"}}}})
        cfn.create_stack(StackName="strict", TemplateBody=body)
        with pytest.raises(botocore.exceptions.WaiterError):
            cfn.get_waiter("stack_create_complete").wait(StackName="strict", WaiterConfig=WAIT)
        assert stack(cfn, "strict")["StackStatus"] == "ROLLBACK_COMPLETE"
        events = cfn.describe_stack_events(StackName="strict")["StackEvents"]
        reason = next(e["ResourceStatusReason"] for e in events if e["ResourceStatus"] == "CREATE_FAILED")
        assert "AWS::Redshift::Cluster" in reason
    finally:
        server.stop()


def test_stack_survives_restart_and_deletes_after_it(tmp_path):
    from conftest import CumuloServer

    server = CumuloServer(data_dir=tmp_path).start()
    try:
        cfn = server.client("cloudformation")
        body = json.dumps(
            {
                "Resources": {
                    "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "restart-q"}},
                    "P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": "/restart/p", "Type": "String", "Value": {"Fn::GetAtt": ["Q", "Arn"]}}},
                },
                "Outputs": {"Url": {"Value": {"Ref": "Q"}}},
            }
        )
        create(cfn, "restart", body)
        before = stack(cfn, "restart")
    finally:
        server.kill9()
    server = CumuloServer(data_dir=tmp_path)
    server.start()
    try:
        cfn, sqs, ssm = (server.client(s) for s in ("cloudformation", "sqs", "ssm"))
        after = stack(cfn, "restart")
        assert (after["StackId"], after["StackStatus"], after["Outputs"]) == (
            before["StackId"],
            "CREATE_COMPLETE",
            before["Outputs"],
        )
        assert queue_exists(sqs, "restart-q")
        assert ssm.get_parameter(Name="/restart/p")["Parameter"]["Value"].endswith(":restart-q")
        delete(cfn, "restart")
        assert not queue_exists(sqs, "restart-q")
        with pytest.raises(botocore.exceptions.ClientError):
            ssm.get_parameter(Name="/restart/p")
    finally:
        server.stop()


def test_stack_tags_reach_taggable_resources(cfn, sqs, sns, ssm, s3):
    p = f"tg-{uid()}"
    body = json.dumps(
        {
            "Resources": {
                "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{p}-q", "Tags": [{"Key": "own", "Value": "q"}]}},
                "T": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": f"{p}-t"}},
                "P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{p}", "Type": "String", "Value": "x", "Tags": {"own": "p"}}},
                "B": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": f"{p}-b"}},
            },
            "Outputs": {"Topic": {"Value": {"Ref": "T"}}},
        }
    )
    create(cfn, p, body, Tags=[{"Key": "cost-center", "Value": "42"}, {"Key": "own", "Value": "stack"}])
    url = sqs.get_queue_url(QueueName=f"{p}-q")["QueueUrl"]
    # The resource's own value wins over the stack's for the same key.
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"cost-center": "42", "own": "q"}
    topic_tags = sns.list_tags_for_resource(ResourceArn=outputs(cfn, p)["Topic"])["Tags"]
    assert {"Key": "cost-center", "Value": "42"} in topic_tags
    param_tags = ssm.list_tags_for_resource(ResourceType="Parameter", ResourceId=f"/{p}")["TagList"]
    # Beside CloudFormation's own aws:cloudformation:* tags (test_cfn_tags.py checks those).
    assert sorted((t["Key"], t["Value"]) for t in param_tags if not t["Key"].startswith("aws:")) == [("cost-center", "42"), ("own", "p")]
    assert {"Key": "cost-center", "Value": "42"} in s3.get_bucket_tagging(Bucket=f"{p}-b")["TagSet"]
    delete(cfn, p)


def test_aws_cli_deploy_through_an_s3_bucket(cumulo, s3, ssm, tmp_path):
    """`deploy --s3-bucket` uploads the template and passes the TemplateURL the CLI builds."""
    p = f"up-{uid()}"
    s3.create_bucket(Bucket=f"{p}-artifacts")
    tpl = tmp_path / "t.yaml"
    tpl.write_text(
        "Resources:\n"
        "  P:\n"
        "    Type: AWS::SSM::Parameter\n"
        "    Properties:\n"
        f"      Name: /{p}/uploaded\n"
        "      Type: String\n"
        "      Value: via-s3\n"
    )
    # --endpoint-url reaches only the CloudFormation client; AWS_ENDPOINT_URL reaches the
    # S3 client the upload uses too, as with LocalStack.
    env = {**os.environ, **CREDS, "AWS_ENDPOINT_URL": cumulo.endpoint}
    proc = subprocess.run(
        ["aws", "cloudformation", "deploy", "--stack-name", p, "--template-file", str(tpl),
         "--s3-bucket", f"{p}-artifacts", "--force-upload"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert ssm.get_parameter(Name=f"/{p}/uploaded")["Parameter"]["Value"] == "via-s3"
    assert s3.list_objects_v2(Bucket=f"{p}-artifacts")["KeyCount"] == 1


def test_failed_update_rolls_back_through_the_providers(cfn, sqs, ssm):
    p = f"ur-{uid()}"

    def tpl(value, visibility):
        return json.dumps(
            {
                "Resources": {
                    "P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{p}", "Type": "String", "Value": value}},
                    "Q": {
                        "Type": "AWS::SQS::Queue",
                        "DependsOn": "P",
                        "Properties": {"QueueName": f"{p}-q", "VisibilityTimeout": visibility},
                    },
                }
            }
        )

    create(cfn, p, tpl("v1", 30))
    cfn.update_stack(StackName=p, TemplateBody=tpl("v2", 999999))
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_update_complete").wait(StackName=p, WaiterConfig=WAIT)
    s = stack(cfn, p)
    assert s["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    # The parameter was updated, then put back by the rollback.
    param = ssm.get_parameter(Name=f"/{p}")["Parameter"]
    assert param["Value"] == "v1" and param["Version"] == 3
    url = sqs.get_queue_url(QueueName=f"{p}-q")["QueueUrl"]
    assert queue_attrs(sqs, url)["VisibilityTimeout"] == "30"
    assert "v1" in json.dumps(cfn.get_template(StackName=p)["TemplateBody"])
    delete(cfn, p)


def test_non_empty_bucket_stops_delete_until_emptied(cfn, s3):
    p = f"ne-{uid()}"
    create(cfn, p, json.dumps({"Resources": {"B": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": f"{p}-b"}}}}))
    s3.put_object(Bucket=f"{p}-b", Key="keep.txt", Body=b"data")
    stack_id = stack(cfn, p)["StackId"]
    cfn.delete_stack(StackName=p)
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    assert stack(cfn, stack_id)["StackStatus"] == "DELETE_FAILED"
    r = resources(cfn, p)["B"]
    assert r["ResourceStatus"] == "DELETE_FAILED"
    assert "not empty" in r["ResourceStatusReason"]
    s3.head_bucket(Bucket=f"{p}-b")
    s3.delete_object(Bucket=f"{p}-b", Key="keep.txt")
    delete(cfn, p)
    with pytest.raises(botocore.exceptions.ClientError):
        s3.head_bucket(Bucket=f"{p}-b")


def test_read_operations_and_state_errors_through_boto3(cfn):
    p = f"rd-{uid()}"
    body = json.dumps(
        {
            "Description": "reads",
            "Resources": {
                "P": {
                    "Type": "AWS::SSM::Parameter",
                    "Metadata": {"note": "hello"},
                    "Properties": {"Name": f"/{p}", "Type": "String", "Value": "x"},
                }
            },
        }
    )
    cfn.create_stack(StackName=p, TemplateBody=body, ClientRequestToken=f"tok-{p}")
    cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    events = cfn.describe_stack_events(StackName=p)["StackEvents"]
    assert {e["ClientRequestToken"] for e in events} == {f"tok-{p}"}
    assert events[0]["LogicalResourceId"] == p and events[0]["ResourceStatus"] == "CREATE_COMPLETE"
    detail = cfn.describe_stack_resource(StackName=p, LogicalResourceId="P")["StackResourceDetail"]
    assert detail["PhysicalResourceId"] == f"/{p}" and json.loads(detail["Metadata"]) == {"note": "hello"}
    summaries = cfn.list_stack_resources(StackName=p)["StackResourceSummaries"]
    assert [(s["LogicalResourceId"], s["ResourceType"], s["ResourceStatus"]) for s in summaries] == [
        ("P", "AWS::SSM::Parameter", "CREATE_COMPLETE")
    ]
    by_physical = cfn.describe_stack_resources(PhysicalResourceId=f"/{p}")["StackResources"]
    assert by_physical[0]["StackName"] == p
    assert cfn.get_template_summary(StackName=p)["Description"] == "reads"
    assert cfn.get_template(StackName=p)["TemplateBody"]["Description"] == "reads"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.continue_update_rollback(StackName=p)
    assert e.value.response["Error"]["Code"] == "ValidationError"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_stack(StackName=p, TemplateBody=body)
    assert e.value.response["Error"]["Code"] == "AlreadyExistsException"
    stack_id = delete(cfn, p)
    listed = [s for s in cfn.list_stacks()["StackSummaries"] if s["StackId"] == stack_id]
    assert listed and listed[0]["StackStatus"] == "DELETE_COMPLETE" and "DeletionTime" in listed[0]
    only_live = cfn.list_stacks(StackStatusFilter=["CREATE_COMPLETE"])["StackSummaries"]
    assert stack_id not in {s["StackId"] for s in only_live}
    with pytest.raises(botocore.exceptions.ClientError):
        cfn.describe_stacks(StackName=p)


def test_a_failure_cancels_what_is_in_flight_and_the_rollback_deletes_it(cumulo, cfn, s3, ssm):
    """A nested stack still being created when a sibling fails is cancelled (AWS's wording),
    and the rollback deletes it with everything it made."""
    p = f"cx-{uid()}"
    bucket = f"{p}-templates"
    s3.create_bucket(Bucket=bucket)
    # A chain the engine must create one after another: the child takes a while.
    chain = {}
    for i in range(150):
        chain[f"P{i}"] = {
            "Type": "AWS::SSM::Parameter",
            "Properties": {"Name": f"/{p}/c{i}", "Type": "String", "Value": "x"},
            **({"DependsOn": [f"P{i - 1}"]} if i else {}),
        }
    s3.put_object(Bucket=bucket, Key="child.json", Body=json.dumps({"Resources": chain}).encode())
    body = json.dumps(
        {
            "Resources": {
                "Child": {
                    "Type": "AWS::CloudFormation::Stack",
                    "Properties": {"TemplateURL": f"{cumulo.endpoint}/{bucket}/child.json"},
                },
                "Bad": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{p}-bad", "VisibilityTimeout": 999999}},
            }
        }
    )
    cfn.create_stack(StackName=p, TemplateBody=body)
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    assert stack(cfn, p)["StackStatus"] == "ROLLBACK_COMPLETE"
    events = cfn.describe_stack_events(StackName=p)["StackEvents"]
    child = [e for e in events if e["LogicalResourceId"] == "Child"]
    assert any(
        e["ResourceStatus"] == "CREATE_FAILED" and e["ResourceStatusReason"] == "Resource creation cancelled"
        for e in child
    ), child
    assert not any(e["ResourceStatus"] == "CREATE_COMPLETE" for e in child), child
    assert any(e["ResourceStatus"] == "DELETE_COMPLETE" for e in child), child
    reason = next(e for e in events if e["ResourceStatus"] == "ROLLBACK_IN_PROGRESS")["ResourceStatusReason"]
    assert reason == "The following resource(s) failed to create: [Bad, Child]. Rollback requested by user."
    # What the cancelled nested stack made is gone.
    left = ssm.get_parameters_by_path(Path=f"/{p}")["Parameters"]
    assert left == []
    child_ids = {e["PhysicalResourceId"] for e in child if e.get("PhysicalResourceId")}
    for cid in child_ids:
        assert cfn.describe_stacks(StackName=cid)["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"
    delete(cfn, p)


def test_stack_policy_denies_updates_to_protected_resources(cfn, ssm):
    p = f"sp-{uid()}"

    def tpl(protected, free):
        return json.dumps(
            {
                "Resources": {
                    "Protected": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{p}/protected", "Type": "String", "Value": protected}},
                    "Free": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{p}/free", "Type": "String", "Value": free}},
                }
            }
        )

    policy = json.dumps(
        {
            "Statement": [
                {"Effect": "Allow", "Action": "Update:*", "Principal": "*", "Resource": "*"},
                {"Effect": "Deny", "Action": "Update:*", "Principal": "*", "Resource": "LogicalResourceId/Protected"},
            ]
        }
    )
    create(cfn, p, tpl("a", "a"), StackPolicyBody=policy)
    assert json.loads(cfn.get_stack_policy(StackName=p)["StackPolicyBody"]) == json.loads(policy)
    # Only the unprotected resource changes: allowed.
    update(cfn, p, tpl("a", "b"))
    assert ssm.get_parameter(Name=f"/{p}/free")["Parameter"]["Value"] == "b"
    # Touching the protected one fails the update and rolls everything back.
    cfn.update_stack(StackName=p, TemplateBody=tpl("z", "c"))
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_update_complete").wait(StackName=p, WaiterConfig=WAIT)
    assert stack(cfn, p)["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    events = cfn.describe_stack_events(StackName=p)["StackEvents"]
    denied = [e for e in events if e["LogicalResourceId"] == "Protected" and e["ResourceStatus"] == "UPDATE_FAILED"]
    assert denied[0]["ResourceStatusReason"] == (
        "Action denied by stack policy: Statement [#2] does not allow [Update:Modify] for resource [LogicalResourceId/Protected]"
    )
    assert ssm.get_parameter(Name=f"/{p}/protected")["Parameter"]["Value"] == "a"
    assert ssm.get_parameter(Name=f"/{p}/free")["Parameter"]["Value"] == "b"
    # A temporary policy for one update lets it through; the stack's own policy stays.
    allow_all = json.dumps({"Statement": [{"Effect": "Allow", "Action": "Update:*", "Principal": "*", "Resource": "*"}]})
    update(cfn, p, tpl("z", "c"), StackPolicyDuringUpdateBody=allow_all)
    assert ssm.get_parameter(Name=f"/{p}/protected")["Parameter"]["Value"] == "z"
    assert json.loads(cfn.get_stack_policy(StackName=p)["StackPolicyBody"]) == json.loads(policy)
    # SetStackPolicy replaces it; removing the resource is then an Update:Delete it denies.
    deny_delete = json.dumps(
        {
            "Statement": [
                {"Effect": "Allow", "Action": "Update:*", "Principal": "*", "Resource": "*"},
                {"Effect": "Deny", "Action": "Update:Delete", "Principal": "*", "Resource": "LogicalResourceId/Free"},
            ]
        }
    )
    cfn.set_stack_policy(StackName=p, StackPolicyBody=deny_delete)
    only_protected = json.dumps({"Resources": {"Protected": json.loads(tpl("z", "c"))["Resources"]["Protected"]}})
    cfn.update_stack(StackName=p, TemplateBody=only_protected)
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_update_complete").wait(StackName=p, WaiterConfig=WAIT)
    assert stack(cfn, p)["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert ssm.get_parameter(Name=f"/{p}/free")["Parameter"]["Value"] == "c"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.set_stack_policy(StackName=p, StackPolicyBody="{not json")
    assert e.value.response["Error"]["Code"] == "ValidationError"
    assert "stack policy" in e.value.response["Error"]["Message"]
    # Policies never block DeleteStack.
    delete(cfn, p)
    with pytest.raises(botocore.exceptions.ClientError):
        ssm.get_parameter(Name=f"/{p}/protected")


def test_role_arn_and_rollback_configuration_are_kept_and_triggers_refused(cfn):
    p = f"ra-{uid()}"
    body = json.dumps({"Resources": {"H": {"Type": "AWS::CloudFormation::WaitConditionHandle"}}})
    role = "arn:aws:iam::000000000000:role/cfn-deployer"
    s = create(cfn, p, body, RoleARN=role, RollbackConfiguration={"MonitoringTimeInMinutes": 0})
    assert s["RoleARN"] == role
    assert s["RollbackConfiguration"] == {"MonitoringTimeInMinutes": 0}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_stack(
            StackName=f"{p}-t",
            TemplateBody=body,
            RollbackConfiguration={"RollbackTriggers": [{"Arn": "arn:aws:cloudwatch:us-east-1:000000000000:alarm:a", "Type": "AWS::CloudWatch::Alarm"}]},
        )
    assert e.value.response["Error"]["Code"] == "ValidationError"
    assert "RollbackTriggers" in e.value.response["Error"]["Message"]
    delete(cfn, p)


def test_notification_arns_receive_every_stack_event_in_aws_format(cfn, sns, sqs):
    p = f"nt-{uid()}"
    topic = sns.create_topic(Name=f"{p}-events")["TopicArn"]
    url = sqs.create_queue(QueueName=f"{p}-inbox")["QueueUrl"]
    qarn = queue_attrs(sqs, url)["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=qarn)
    body = json.dumps({"Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{p}/p", "Type": "String", "Value": "v"}}}})
    s = create(cfn, p, body, NotificationARNs=[topic])
    assert s["NotificationARNs"] == [topic]
    delete(cfn, p)
    messages = []
    for _ in range(20):
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
        if not got:
            break
        messages += [json.loads(m["Body"]) for m in got]
    assert all(m["Subject"] == "AWS CloudFormation Notification" for m in messages)
    lines = [dict(l.split("=", 1) for l in m["Message"].strip().split("\n")) for m in messages]
    seen = {(l["LogicalResourceId"], l["ResourceStatus"]) for l in lines}
    for want in [
        (f"'{p}'", "'CREATE_IN_PROGRESS'"),
        ("'P'", "'CREATE_IN_PROGRESS'"),
        ("'P'", "'CREATE_COMPLETE'"),
        (f"'{p}'", "'CREATE_COMPLETE'"),
        ("'P'", "'DELETE_COMPLETE'"),
        (f"'{p}'", "'DELETE_COMPLETE'"),
    ]:
        assert want in seen, (want, seen)
    first = lines[0]
    assert first["StackId"] == f"'{s['StackId']}'" and first["StackName"] == f"'{p}'"
    assert first["ResourceType"] == "'AWS::CloudFormation::Stack'"
    assert set(first) >= {"Timestamp", "EventId", "Namespace", "PhysicalResourceId", "PrincipalId", "ResourceProperties", "ResourceStatusReason", "ClientRequestToken"}
