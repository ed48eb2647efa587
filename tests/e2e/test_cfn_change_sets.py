"""CloudFormation change sets end to end: nested change sets (IncludeNestedStacks) over two levels
of nesting, created, described, executed and deleted with boto3, as the newest CDK drives them."""
import json
import uuid

import botocore.exceptions
import pytest

WAIT = {"Delay": 1, "MaxAttempts": 60}
NESTED = "AWS::CloudFormation::Stack"


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def ssm(cumulo):
    return cumulo.client("ssm")


@pytest.fixture(scope="module")
def s3(cumulo):
    return cumulo.client("s3")


def templates(cumulo, s3, p):
    """Uploads the leaf and middle templates; returns the root template for a parameter value."""
    bucket = f"{p}-templates"
    s3.create_bucket(Bucket=bucket)
    leaf = {
        "Parameters": {"Value": {"Type": "String"}},
        "Resources": {
            "P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{p}/leaf", "Type": "String", "Value": {"Ref": "Value"}}}
        },
        "Outputs": {"Name": {"Value": {"Ref": "P"}}},
    }
    mid = {
        "Parameters": {"Value": {"Type": "String"}},
        "Resources": {
            "Leaf": {
                "Type": NESTED,
                "Properties": {"TemplateURL": f"{cumulo.endpoint}/{bucket}/leaf.json", "Parameters": {"Value": {"Ref": "Value"}}},
            }
        },
        "Outputs": {"Name": {"Value": {"Fn::GetAtt": ["Leaf", "Outputs.Name"]}}},
    }
    s3.put_object(Bucket=bucket, Key="leaf.json", Body=json.dumps(leaf).encode())
    s3.put_object(Bucket=bucket, Key="mid.json", Body=json.dumps(mid).encode())

    def root(value):
        return json.dumps(
            {
                "Resources": {
                    "Mid": {
                        "Type": NESTED,
                        "Properties": {"TemplateURL": f"{cumulo.endpoint}/{bucket}/mid.json", "Parameters": {"Value": value}},
                    }
                },
                "Outputs": {"Name": {"Value": {"Fn::GetAtt": ["Mid", "Outputs.Name"]}}},
            }
        )

    return root


def nested_of(cfn, cs, logical):
    """DescribeChangeSet of the nested change set a resource change links to."""
    change = next(c["ResourceChange"] for c in cs["Changes"] if c["ResourceChange"]["LogicalResourceId"] == logical)
    assert change["ResourceType"] == NESTED
    return change, cfn.describe_change_set(ChangeSetName=change["ChangeSetId"])


def assert_nested(cs, parent, root):
    assert cs["ParentChangeSetId"] == parent and cs["RootChangeSetId"] == root
    assert (cs["Status"], cs["ExecutionStatus"], cs["StatusReason"]) == (
        "CREATE_COMPLETE",
        "UNAVAILABLE",
        "Executable from root change set",
    )
    assert cs["IncludeNestedStacks"] is True


def hierarchy(cfn, root_id):
    """The root change set and its two levels of nested ones, each checked for its links."""
    top = cfn.describe_change_set(ChangeSetName=root_id)
    assert top["ExecutionStatus"] == "AVAILABLE" and "ParentChangeSetId" not in top
    mid_change, mid = nested_of(cfn, top, "Mid")
    assert_nested(mid, root_id, root_id)
    leaf_change, leaf = nested_of(cfn, mid, "Leaf")
    assert_nested(leaf, mid["ChangeSetId"], root_id)
    return (mid_change, mid), (leaf_change, leaf)


def test_create_change_set_with_nested_stacks_creates_every_level_on_execute(cumulo, cfn, s3, ssm):
    p = f"ncs-{uid()}"
    root = templates(cumulo, s3, p)
    out = cfn.create_change_set(
        StackName=p, ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=root("one"), IncludeNestedStacks=True
    )
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=out["Id"], WaiterConfig=WAIT)
    (mid_change, mid), (_, leaf) = hierarchy(cfn, out["Id"])
    assert mid_change["Action"] == "Add"
    assert [c["ResourceChange"]["LogicalResourceId"] for c in leaf["Changes"]] == ["P"]
    # The nested stacks are there before execution, REVIEW_IN_PROGRESS under their parents.
    mid_stack = cfn.describe_stacks(StackName=mid["StackId"])["Stacks"][0]
    assert mid_stack["StackStatus"] == "REVIEW_IN_PROGRESS" and mid_stack["ParentId"] == out["StackId"]
    # Only the root executes.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.execute_change_set(ChangeSetName=leaf["ChangeSetId"])
    assert e.value.response["Error"]["Code"] == "InvalidChangeSetStatus"
    cfn.execute_change_set(ChangeSetName=out["Id"])
    cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    assert ssm.get_parameter(Name=f"/{p}/leaf")["Parameter"]["Value"] == "one"
    mid_id = cfn.describe_stack_resource(StackName=p, LogicalResourceId="Mid")["StackResourceDetail"]["PhysicalResourceId"]
    assert mid_id == mid["StackId"]
    for cs in (out["Id"], mid["ChangeSetId"], leaf["ChangeSetId"]):
        assert cfn.describe_change_set(ChangeSetName=cs)["ExecutionStatus"] == "EXECUTE_COMPLETE"
    cfn.delete_stack(StackName=p)
    cfn.get_waiter("stack_delete_complete").wait(StackName=p, WaiterConfig=WAIT)


def test_update_change_set_with_nested_stacks_shows_and_applies_each_level(cumulo, cfn, s3, ssm):
    p = f"nus-{uid()}"
    root = templates(cumulo, s3, p)
    cfn.create_stack(StackName=p, TemplateBody=root("one"))
    cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    out = cfn.create_change_set(StackName=p, ChangeSetName="second", TemplateBody=root("two"), IncludeNestedStacks=True)
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=out["Id"], WaiterConfig=WAIT)
    (mid_change, mid), (leaf_change, leaf) = hierarchy(cfn, out["Id"])
    assert (mid_change["Action"], mid_change["Replacement"]) == ("Modify", "False")
    assert {"Target": {"Attribute": "Properties", "RequiresRecreation": "Never"}, "Evaluation": "Dynamic", "ChangeSource": "Automatic"} in mid_change["Details"]
    assert leaf_change["Action"] == "Modify"
    p_change = leaf["Changes"][0]["ResourceChange"]
    assert (p_change["LogicalResourceId"], p_change["Details"][0]["Target"]["Name"]) == ("P", "Value")
    # Each nested change set is listed on its own stack.
    listed = cfn.list_change_sets(StackName=leaf["StackId"])["Summaries"]
    assert [(s["ChangeSetId"], s["RootChangeSetId"]) for s in listed] == [(leaf["ChangeSetId"], out["Id"])]
    cfn.execute_change_set(ChangeSetName="second", StackName=p)
    cfn.get_waiter("stack_update_complete").wait(StackName=p, WaiterConfig=WAIT)
    assert ssm.get_parameter(Name=f"/{p}/leaf")["Parameter"]["Value"] == "two"
    for cs in (mid["ChangeSetId"], leaf["ChangeSetId"]):
        assert cfn.describe_change_set(ChangeSetName=cs)["ExecutionStatus"] == "EXECUTE_COMPLETE"
    cfn.delete_stack(StackName=p)
    cfn.get_waiter("stack_delete_complete").wait(StackName=p, WaiterConfig=WAIT)


def test_deleting_the_root_change_set_deletes_the_nested_ones_and_their_stacks(cumulo, cfn, s3):
    p = f"nds-{uid()}"
    root = templates(cumulo, s3, p)
    out = cfn.create_change_set(
        StackName=p, ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=root("one"), IncludeNestedStacks=True
    )
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=out["Id"], WaiterConfig=WAIT)
    (_, mid), (_, leaf) = hierarchy(cfn, out["Id"])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.delete_change_set(ChangeSetName=mid["ChangeSetId"])
    assert e.value.response["Error"]["Code"] == "InvalidChangeSetStatus"
    cfn.delete_change_set(ChangeSetName=out["Id"])
    for cs in (mid, leaf):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            cfn.describe_change_set(ChangeSetName=cs["ChangeSetId"])
        assert e.value.response["Error"]["Code"] == "ChangeSetNotFound"
        assert cfn.describe_stacks(StackName=cs["StackId"])["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"
    cfn.delete_stack(StackName=p)


def test_change_set_errors_in_aws_words(cfn):
    p = f"cse-{uid()}"
    body = json.dumps({"Resources": {"H": {"Type": "AWS::CloudFormation::WaitConditionHandle"}}})
    cfn.create_stack(StackName=p, TemplateBody=body)
    cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_change_set(StackName=p, ChangeSetName="again", ChangeSetType="CREATE", TemplateBody=body)
    assert e.value.response["Error"]["Code"] == "ValidationError"
    assert e.value.response["Error"]["Message"] == f"Stack [{p}] already exists and cannot be created again with the changeSet [again]."
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.describe_change_set(StackName=f"{p}-missing", ChangeSetName="any")
    assert e.value.response["Error"]["Code"] == "ValidationError"
    assert e.value.response["Error"]["Message"] == f"Stack [{p}-missing] does not exist"
    cfn.delete_stack(StackName=p)


def test_describe_change_set_pages_changes_and_shows_property_values_when_asked(cfn, ssm):
    p = f"cpv-{uid()}"
    handles = {f"H{i:03}": {"Type": "AWS::CloudFormation::WaitConditionHandle"} for i in range(101)}
    out = cfn.create_change_set(StackName=p, ChangeSetName="many", ChangeSetType="CREATE", TemplateBody=json.dumps({"Resources": handles}))
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=out["Id"], WaiterConfig=WAIT)
    first = cfn.describe_change_set(ChangeSetName=out["Id"])
    second = cfn.describe_change_set(ChangeSetName=out["Id"], NextToken=first["NextToken"])
    assert (len(first["Changes"]), len(second["Changes"]), "NextToken" in second) == (100, 1, False)
    cfn.delete_change_set(ChangeSetName=out["Id"])

    def template(value):
        return json.dumps(
            {"Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{p}/p", "Type": "String", "Value": value}}}}
        )

    cfn.create_stack(StackName=f"{p}-s", TemplateBody=template("before"))
    cfn.get_waiter("stack_create_complete").wait(StackName=f"{p}-s", WaiterConfig=WAIT)
    cs = cfn.create_change_set(StackName=f"{p}-s", ChangeSetName="values", TemplateBody=template("after"))
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=cs["Id"], WaiterConfig=WAIT)
    plain = cfn.describe_change_set(ChangeSetName=cs["Id"])["Changes"][0]["ResourceChange"]
    assert "BeforeValue" not in plain["Details"][0]["Target"] and "BeforeContext" not in plain
    shown = cfn.describe_change_set(ChangeSetName=cs["Id"], IncludePropertyValues=True)["Changes"][0]["ResourceChange"]
    target = shown["Details"][0]["Target"]
    assert (target["Path"], target["BeforeValue"], target["AfterValue"], target["AttributeChangeType"]) == (
        "/Properties/Value",
        "before",
        "after",
        "Modify",
    )
    assert json.loads(shown["AfterContext"])["Properties"]["Value"] == "after"
    hooks = cfn.describe_change_set_hooks(ChangeSetName=cs["Id"])
    assert (hooks["ChangeSetId"], hooks["Hooks"], hooks["Status"], hooks["StackName"]) == (cs["Id"], [], "PLANNED", f"{p}-s")
    cfn.delete_stack(StackName=f"{p}-s")


def test_policy_only_change_is_a_modify_that_execution_applies(cfn, ssm):
    p = f"cpo-{uid()}"

    def template(**policies):
        return json.dumps(
            {
                "Parameters": {"V": {"Type": "String"}},
                "Resources": {
                    "P": {
                        "Type": "AWS::SSM::Parameter",
                        **policies,
                        "Properties": {"Name": f"/{p}/p", "Type": "String", "Value": {"Ref": "V"}},
                    }
                },
            }
        )

    cfn.create_stack(StackName=p, TemplateBody=template(), Parameters=[{"ParameterKey": "V", "ParameterValue": "a"}])
    cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    # A parameter change: AWS's ParameterReference beside a Dynamic DirectModification.
    cs = cfn.create_change_set(StackName=p, ChangeSetName="param", TemplateBody=template(), Parameters=[{"ParameterKey": "V", "ParameterValue": "b"}])
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=cs["Id"], WaiterConfig=WAIT)
    details = cfn.describe_change_set(ChangeSetName=cs["Id"])["Changes"][0]["ResourceChange"]["Details"]
    assert [(d["ChangeSource"], d["Evaluation"], d.get("CausingEntity")) for d in details] == [
        ("ParameterReference", "Static", "V"),
        ("DirectModification", "Dynamic", None),
    ]
    cfn.delete_change_set(ChangeSetName=cs["Id"])
    # A DeletionPolicy alone: Modify without replacement, and executing it applies it.
    retained = template(DeletionPolicy="Retain", UpdateReplacePolicy="Retain")
    cs = cfn.create_change_set(StackName=p, ChangeSetName="retain", TemplateBody=retained, Parameters=[{"ParameterKey": "V", "UsePreviousValue": True}])
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=cs["Id"], WaiterConfig=WAIT)
    change = cfn.describe_change_set(ChangeSetName=cs["Id"], IncludePropertyValues=True)["Changes"][0]["ResourceChange"]
    assert (change["Action"], change["Replacement"], change["Scope"]) == ("Modify", "False", ["DeletionPolicy", "UpdateReplacePolicy"])
    assert [d["Target"]["AfterValue"] for d in change["Details"]] == ["Retain", "Retain"]
    cfn.execute_change_set(ChangeSetName=cs["Id"])
    cfn.get_waiter("stack_update_complete").wait(StackName=p, WaiterConfig=WAIT)
    cfn.delete_stack(StackName=p)
    cfn.get_waiter("stack_delete_complete").wait(StackName=p, WaiterConfig=WAIT)
    assert ssm.get_parameter(Name=f"/{p}/p")["Parameter"]["Value"] == "a"
