"""CloudFormation operations beside create/update/delete, end to end with boto3 and the AWS CLI:
termination protection, drift through the API (and its agreement with `cumulo drift`), IMPORT
change sets, signals and wait conditions, account limits and the registry reads."""
import json
import os
import subprocess
import uuid

import botocore.exceptions
import pytest
from conftest import BIN, CumuloServer

WAIT = {"Delay": 1, "MaxAttempts": 60}


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def sqs(cumulo):
    return cumulo.client("sqs")


QUEUE = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 30}}}}


def create(cfn, name, template, **kw):
    stack_id = cfn.create_stack(StackName=name, TemplateBody=json.dumps(template), **kw)["StackId"]
    cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=WAIT)
    return stack_id


def error(e):
    err = e.value.response
    return err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"], err["Error"]["Message"]


def test_termination_protection_refuses_delete_until_lifted(cfn, cumulo):
    name = f"tp-{uid()}"
    stack_id = create(cfn, name, QUEUE)
    assert cfn.describe_stacks(StackName=name)["Stacks"][0]["EnableTerminationProtection"] is False
    out = cfn.update_termination_protection(StackName=name, EnableTerminationProtection=True)
    assert out["StackId"] == stack_id
    assert cfn.describe_stacks(StackName=name)["Stacks"][0]["EnableTerminationProtection"] is True
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.delete_stack(StackName=name)
    assert error(e) == (
        "ValidationError",
        400,
        f"Stack [{name}] cannot be deleted while TerminationProtection is enabled",
    )
    assert cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    # The AWS CLI lifts it; the stack deletes.
    out = cumulo.aws("cloudformation", "update-termination-protection", "--stack-name", name, "--no-enable-termination-protection")
    assert out["StackId"] == stack_id
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    # A deleted stack given by ARN is refused as AWS refuses it.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.update_stack(StackName=stack_id, TemplateBody=json.dumps(QUEUE))
    assert error(e) == ("ValidationError", 400, f"Stack:{stack_id} is in DELETE_COMPLETE state and can not be updated.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.update_termination_protection(StackName=stack_id, EnableTerminationProtection=True)
    assert error(e)[2] == f"Stack:{stack_id} is in DELETE_COMPLETE state and can not be updated."


def test_create_stack_with_protection_is_protected(cfn):
    name = f"tpc-{uid()}"
    create(cfn, name, QUEUE, EnableTerminationProtection=True)
    with pytest.raises(botocore.exceptions.ClientError):
        cfn.delete_stack(StackName=name)
    cfn.update_termination_protection(StackName=name, EnableTerminationProtection=False)
    cfn.delete_stack(StackName=name)


def test_drift_detection_through_the_api(cfn, sqs):
    name = f"drift-{uid()}"
    stack_id = create(cfn, name, QUEUE)
    assert cfn.describe_stacks(StackName=name)["Stacks"][0]["DriftInformation"] == {"StackDriftStatus": "NOT_CHECKED"}
    detection = cfn.detect_stack_drift(StackName=name)["StackDriftDetectionId"]
    status = cfn.describe_stack_drift_detection_status(StackDriftDetectionId=detection)
    assert (status["StackId"], status["DetectionStatus"], status["StackDriftStatus"]) == (stack_id, "DETECTION_COMPLETE", "IN_SYNC")
    assert status["DriftedStackResourceCount"] == 0
    drifts = cfn.describe_stack_resource_drifts(StackName=name)["StackResourceDrifts"]
    assert [(d["LogicalResourceId"], d["StackResourceDriftStatus"]) for d in drifts] == [("Queue", "IN_SYNC")]
    assert json.loads(drifts[0]["ExpectedProperties"])["VisibilityTimeout"] in (30, "30")
    # Changed behind the stack's back.
    url = cfn.describe_stack_resource(StackName=name, LogicalResourceId="Queue")["StackResourceDetail"]["PhysicalResourceId"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "60"})
    detection = cfn.detect_stack_drift(StackName=name)["StackDriftDetectionId"]
    status = cfn.describe_stack_drift_detection_status(StackDriftDetectionId=detection)
    assert (status["DetectionStatus"], status["StackDriftStatus"], status["DriftedStackResourceCount"]) == ("DETECTION_COMPLETE", "DRIFTED", 1)
    stack = cfn.describe_stacks(StackName=name)["Stacks"][0]
    assert stack["DriftInformation"]["StackDriftStatus"] == "DRIFTED"
    assert "LastCheckTimestamp" in stack["DriftInformation"]
    resource = cfn.describe_stack_resource(StackName=name, LogicalResourceId="Queue")["StackResourceDetail"]
    assert resource["DriftInformation"]["StackResourceDriftStatus"] == "MODIFIED"
    listed = cfn.list_stack_resources(StackName=name)["StackResourceSummaries"][0]
    assert listed["DriftInformation"]["StackResourceDriftStatus"] == "MODIFIED"
    drifts = cfn.describe_stack_resource_drifts(StackName=name, StackResourceDriftStatusFilters=["MODIFIED"])["StackResourceDrifts"]
    assert len(drifts) == 1
    assert drifts[0]["PropertyDifferences"] == [
        {"PropertyPath": "/VisibilityTimeout", "ExpectedValue": "30", "ActualValue": "60", "DifferenceType": "NOT_EQUAL"}
    ]
    assert json.loads(drifts[0]["ActualProperties"])["VisibilityTimeout"] in (60, "60")
    assert cfn.describe_stack_resource_drifts(StackName=name, StackResourceDriftStatusFilters=["IN_SYNC"])["StackResourceDrifts"] == []
    one = cfn.detect_stack_resource_drift(StackName=name, LogicalResourceId="Queue")["StackResourceDrift"]
    assert (one["StackResourceDriftStatus"], one["PhysicalResourceId"]) == ("MODIFIED", url)
    # The AWS CLI's view of the same.
    summaries = cfn.list_stacks()["StackSummaries"]
    assert next(s for s in summaries if s["StackId"] == stack_id)["DriftInformation"]["StackDriftStatus"] == "DRIFTED"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.detect_stack_resource_drift(StackName=name, LogicalResourceId="Nope")
    assert error(e)[:2] == ("ValidationError", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.describe_stack_drift_detection_status(StackDriftDetectionId="not-a-detection")
    assert error(e)[:2] == ("ValidationError", 400)
    cfn.delete_stack(StackName=name)


def cli(*args, state):
    return subprocess.run(
        [str(BIN), *args, "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "AWS_REGION": "us-east-1"},
    )


def test_cumulo_drift_and_the_endpoint_agree(tmp_path):
    state = tmp_path / "state"
    tpl = tmp_path / "q.json"
    tpl.write_text(json.dumps(QUEUE))
    assert cli("deploy", str(tpl), "--stack", "agree", state=state).returncode == 0
    server = CumuloServer(data_dir=state).start()
    try:
        cfn = server.client("cloudformation")
        url = cfn.describe_stack_resource(StackName="agree", LogicalResourceId="Queue")["StackResourceDetail"]["PhysicalResourceId"]
        server.client("sqs").set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "45"})
    finally:
        server.stop()
    report = cli("drift", "--stack", "agree", "--output", "json", state=state)
    assert report.returncode == 1, report.stderr
    [queue] = json.loads(report.stdout)["resources"]
    assert queue["status"] == "MODIFIED"
    server = CumuloServer(data_dir=state).start()
    try:
        cfn = server.client("cloudformation")
        # What `cumulo drift` found is the stack's drift status through the API ...
        assert cfn.describe_stacks(StackName="agree")["Stacks"][0]["DriftInformation"]["StackDriftStatus"] == "DRIFTED"
        [d] = cfn.describe_stack_resource_drifts(StackName="agree")["StackResourceDrifts"]
        assert d["StackResourceDriftStatus"] == "MODIFIED"
        assert [p["PropertyPath"] for p in d["PropertyDifferences"]] == ["/" + p["path"] for p in queue["differences"]]
        # ... and a detection through the API finds the same.
        detection = cfn.detect_stack_drift(StackName="agree")["StackDriftDetectionId"]
        assert cfn.describe_stack_drift_detection_status(StackDriftDetectionId=detection)["StackDriftStatus"] == "DRIFTED"
    finally:
        server.stop()


def import_template(queue_name, policy="Retain"):
    queue = {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": queue_name, "VisibilityTimeout": 30}}
    if policy:
        queue["DeletionPolicy"] = policy
    return json.dumps({"Resources": {"Queue": queue}, "Outputs": {"Arn": {"Value": {"Fn::GetAtt": ["Queue", "Arn"]}}}})


def test_import_change_set_adopts_a_retained_resource(cfn, sqs):
    queue_name = f"imp-{uid()}"
    url = sqs.create_queue(QueueName=queue_name, Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    to_import = [{"ResourceType": "AWS::SQS::Queue", "LogicalResourceId": "Queue", "ResourceIdentifier": {"QueueUrl": url}}]
    name = f"imp-{uid()}"
    # AWS's checks, each refusing before anything is recorded.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_change_set(StackName=name, ChangeSetName="i1", ChangeSetType="IMPORT",
                              TemplateBody=import_template(queue_name, policy=None), ResourcesToImport=to_import)
    assert error(e) == ("ValidationError", 400, "The following resources to import [Queue] must have DeletionPolicy attribute specified in the template.")
    missing = [{**to_import[0], "ResourceIdentifier": {"QueueUrl": url + "-gone"}}]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_change_set(StackName=name, ChangeSetName="i1", ChangeSetType="IMPORT",
                              TemplateBody=import_template(queue_name), ResourcesToImport=missing)
    assert error(e)[2] == "Resources [Queue] to import do not exist."
    with pytest.raises(cfn.exceptions.ClientError):
        cfn.describe_stacks(StackName=name)
    # The import itself.
    cs = cfn.create_change_set(StackName=name, ChangeSetName="i1", ChangeSetType="IMPORT",
                               TemplateBody=import_template(queue_name), ResourcesToImport=to_import)
    assert cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"] == "REVIEW_IN_PROGRESS"
    described = cfn.describe_change_set(ChangeSetName=cs["Id"])
    assert (described["Status"], described["ExecutionStatus"]) == ("CREATE_COMPLETE", "AVAILABLE")
    [change] = described["Changes"]
    assert change["ResourceChange"]["Action"] == "Import"
    assert change["ResourceChange"]["LogicalResourceId"] == "Queue"
    assert change["ResourceChange"]["PhysicalResourceId"] == url
    cfn.execute_change_set(ChangeSetName=cs["Id"])
    cfn.get_waiter("stack_import_complete").wait(StackName=name, WaiterConfig=WAIT)
    stack = cfn.describe_stacks(StackName=name)["Stacks"][0]
    assert stack["StackStatus"] == "IMPORT_COMPLETE"
    assert stack["Outputs"] == [{"OutputKey": "Arn", "OutputValue": arn}]
    assert cfn.describe_change_set(ChangeSetName=cs["Id"])["ExecutionStatus"] == "EXECUTE_COMPLETE"
    resource = cfn.describe_stack_resource(StackName=name, LogicalResourceId="Queue")["StackResourceDetail"]
    assert (resource["PhysicalResourceId"], resource["ResourceStatus"]) == (url, "IMPORT_COMPLETE")
    events = [(e["LogicalResourceId"], e["ResourceStatus"]) for e in reversed(cfn.describe_stack_events(StackName=name)["StackEvents"])]
    assert events[-4:] == [(name, "IMPORT_IN_PROGRESS"), ("Queue", "IMPORT_IN_PROGRESS"), ("Queue", "IMPORT_COMPLETE"), (name, "IMPORT_COMPLETE")]
    # Held by a stack: another stack cannot import it.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_change_set(StackName=f"imp-{uid()}", ChangeSetName="i2", ChangeSetType="IMPORT",
                              TemplateBody=import_template(queue_name), ResourcesToImport=to_import)
    assert error(e)[2] == "Resources [Queue] passed in ResourceToImport are already in a stack and cannot be imported."
    # Deleting the stack retains the queue, which a new stack brings back under management.
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig=WAIT)
    assert sqs.get_queue_url(QueueName=queue_name)["QueueUrl"] == url
    again = f"imp-{uid()}"
    cs = cfn.create_change_set(StackName=again, ChangeSetName="back", ChangeSetType="IMPORT",
                               TemplateBody=import_template(queue_name), ResourcesToImport=to_import)
    cfn.execute_change_set(ChangeSetName=cs["Id"])
    cfn.get_waiter("stack_import_complete").wait(StackName=again, WaiterConfig=WAIT)
    assert cfn.describe_stack_resource(StackName=again, LogicalResourceId="Queue")["StackResourceDetail"]["PhysicalResourceId"] == url
    cfn.delete_stack(StackName=again)


def test_import_into_an_existing_stack_refuses_other_changes(cfn, sqs, cumulo):
    name = f"impx-{uid()}"
    create(cfn, name, {"Resources": {"Other": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 10}}}})
    queue_name = f"impx-{uid()}"
    url = sqs.create_queue(QueueName=queue_name)["QueueUrl"]
    other = {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 10}}
    body = {"Resources": {"Other": other, "Queue": {"Type": "AWS::SQS::Queue", "DeletionPolicy": "Retain", "Properties": {"QueueName": queue_name}}}}
    to_import = [{"ResourceType": "AWS::SQS::Queue", "LogicalResourceId": "Queue", "ResourceIdentifier": {"QueueUrl": url}}]
    changed = json.loads(json.dumps(body))
    changed["Resources"]["Other"]["Properties"]["VisibilityTimeout"] = 20
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_change_set(StackName=name, ChangeSetName="x", ChangeSetType="IMPORT", TemplateBody=json.dumps(changed), ResourcesToImport=to_import)
    assert error(e)[2].startswith("You have modified resources [Other] in your template that are not being imported.")
    assert cfn.list_change_sets(StackName=name)["Summaries"] == []
    # Nor may the import add (or change, or drop) an output.
    with_output = dict(body, Outputs={"Url": {"Value": {"Ref": "Queue"}}})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_change_set(StackName=name, ChangeSetName="x", ChangeSetType="IMPORT", TemplateBody=json.dumps(with_output), ResourcesToImport=to_import)
    assert error(e)[0] == "ValidationError"
    assert error(e)[2] == ("You have modified outputs [Url] in your template. "
                           "Outputs cannot be added, modified or removed during import operations.")
    assert cfn.list_change_sets(StackName=name)["Summaries"] == []
    # The AWS CLI, as a user types it.
    out = cumulo.aws("cloudformation", "create-change-set", "--stack-name", name, "--change-set-name", "x",
                     "--change-set-type", "IMPORT", "--template-body", json.dumps(body),
                     "--resources-to-import", json.dumps(to_import))
    cumulo.aws("cloudformation", "execute-change-set", "--change-set-name", out["Id"])
    cfn.get_waiter("stack_import_complete").wait(StackName=name, WaiterConfig=WAIT)
    ids = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cfn.describe_stack_resources(StackName=name)["StackResources"]}
    assert ids["Queue"] == url
    cfn.delete_stack(StackName=name)


def test_account_limits_are_awss_defaults(cfn, cumulo):
    limits = {l["Name"]: l["Value"] for l in cfn.describe_account_limits()["AccountLimits"]}
    assert limits == {"StackLimit": 2000, "StackOutputsLimit": 200, "ConcurrentResourcesLimit": 2500}
    out = cumulo.aws("cloudformation", "describe-account-limits")
    assert {l["Name"] for l in out["AccountLimits"]} == set(limits)


def test_registry_reads_answer_for_emulated_types(cfn, cumulo):
    t = cfn.describe_type(Type="RESOURCE", TypeName="AWS::SQS::Queue")
    assert t["Arn"] == "arn:aws:cloudformation:us-east-1::type/resource/AWS-SQS-Queue"
    assert (t["Type"], t["TypeName"], t["Visibility"], t["DeprecatedStatus"]) == ("RESOURCE", "AWS::SQS::Queue", "PUBLIC", "LIVE")
    assert t["ProvisioningType"] == "FULLY_MUTABLE" and t["IsDefaultVersion"] is True
    schema = json.loads(t["Schema"])
    assert schema["typeName"] == "AWS::SQS::Queue" and "/properties/QueueUrl" in schema["primaryIdentifier"]
    assert cfn.describe_type(Arn=t["Arn"])["TypeName"] == "AWS::SQS::Queue"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.describe_type(Type="RESOURCE", TypeName="AWS::Redshift::Cluster")
    assert error(e) == ("TypeNotFoundException", 404, "The type 'AWS::Redshift::Cluster' cannot be found.")
    pages = cfn.get_paginator("list_types").paginate(Visibility="PUBLIC", Type="RESOURCE")
    public = [s for page in pages for s in page["TypeSummaries"]]
    names = [s["TypeName"] for s in public]
    assert "AWS::SQS::Queue" in names and "AWS::S3::Bucket" in names and "AWS::Redshift::Cluster" not in names
    assert names == sorted(names)
    assert cfn.list_types()["TypeSummaries"] == []  # PRIVATE by default: none registered here
    sqs_only = cfn.list_types(Visibility="PUBLIC", Filters={"TypeNamePrefix": "AWS::SQS::"})["TypeSummaries"]
    assert {s["TypeName"] for s in sqs_only} == {"AWS::SQS::Queue", "AWS::SQS::QueuePolicy"}
    out = cumulo.aws("cloudformation", "describe-type", "--type", "RESOURCE", "--type-name", "AWS::SNS::Topic")
    assert out["TypeName"] == "AWS::SNS::Topic"
    batch = cfn.batch_describe_type_configurations(TypeConfigurationIdentifiers=[{"TypeName": "AWS::SQS::Queue", "Type": "RESOURCE"}])
    assert batch["TypeConfigurations"] == []
    assert batch["Errors"][0]["ErrorCode"] == "TypeConfigurationNotFoundException"
