"""IAM resource types end to end: a stack with every type, created, updated in place, replaced
(RoleName change), failed part way (compensated), and deleted, checked through IAM's own API
after every phase; plus `aws cloudformation deploy`."""
import json
import os
import subprocess
import tempfile
import time
import uuid

import botocore.exceptions
import pytest
from conftest import CREDS

WAIT = {"Delay": 1, "MaxAttempts": 60}
CAPS = ["CAPABILITY_NAMED_IAM"]
TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}
BASIC = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
READ_ONLY = "arn:aws:iam::aws:policy/ReadOnlyAccess"


def uid():
    return uuid.uuid4().hex[:8]


def doc(action):
    return {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": action, "Resource": "*"}]}


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def iam(cumulo):
    return cumulo.client("iam")


def stack(cfn, name):
    return cfn.describe_stacks(StackName=name)["Stacks"][0]


def outputs(cfn, name):
    return {o["OutputKey"]: o["OutputValue"] for o in stack(cfn, name).get("Outputs", [])}


def physical(cfn, name):
    return {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for r in cfn.describe_stack_resources(StackName=name)["StackResources"]
    }


def gone(call, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call(**kw)
    return e.value.response["Error"]["Code"] == "NoSuchEntity"


def template(p, role_name=None, role_policies=("first",), description="v1", policy_action="s3:GetObject",
             managed_action="sqs:SendMessage", tag="one", extra_arns=(), group_arns=(), managed_groups=False):
    role_name = role_name or f"{p}-role"
    return json.dumps({
        "Resources": {
            "Managed": {
                "Type": "AWS::IAM::ManagedPolicy",
                "Properties": {
                    "ManagedPolicyName": f"{p}-managed",
                    "Description": "managed",
                    "Path": "/stack/",
                    "PolicyDocument": doc(managed_action),
                    "Users": [{"Ref": "User"}],
                    "Groups": [{"Ref": "Group"}] if managed_groups else [],
                },
            },
            "Role": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "RoleName": role_name,
                    "Path": "/svc/",
                    "Description": description,
                    "AssumeRolePolicyDocument": TRUST,
                    "MaxSessionDuration": 3600,
                    "Policies": [{"PolicyName": n, "PolicyDocument": doc(f"s3:{n}")} for n in role_policies],
                    "ManagedPolicyArns": [{"Ref": "Managed"}, BASIC, *extra_arns],
                    "Tags": [{"Key": "tag", "Value": tag}],
                },
            },
            "Policy": {
                "Type": "AWS::IAM::Policy",
                "Properties": {
                    "PolicyName": f"{p}-inline",
                    "PolicyDocument": doc(policy_action),
                    "Roles": [{"Ref": "Role"}],
                    "Groups": [{"Ref": "Group"}],
                },
            },
            "Group": {
                "Type": "AWS::IAM::Group",
                "Properties": {
                    "GroupName": f"{p}-group",
                    "Policies": [{"PolicyName": "gp", "PolicyDocument": doc("logs:*")}],
                    "ManagedPolicyArns": list(group_arns),
                },
            },
            "User": {
                "Type": "AWS::IAM::User",
                "Properties": {
                    "UserName": f"{p}-user",
                    "Groups": [{"Ref": "Group"}],
                    "Tags": [{"Key": "tag", "Value": tag}],
                },
            },
            "Key": {"Type": "AWS::IAM::AccessKey", "Properties": {"UserName": {"Ref": "User"}}},
            "Profile": {
                "Type": "AWS::IAM::InstanceProfile",
                "Properties": {"Roles": [{"Ref": "Role"}]},
            },
            "Linked": {
                "Type": "AWS::IAM::ServiceLinkedRole",
                "Properties": {
                    "AWSServiceName": "elasticbeanstalk.amazonaws.com",
                    "CustomSuffix": p,
                    "Description": description,
                },
            },
        },
        "Outputs": {
            "RoleArn": {"Value": {"Fn::GetAtt": ["Role", "Arn"]}},
            "RoleId": {"Value": {"Fn::GetAtt": ["Role", "RoleId"]}},
            "ManagedArn": {"Value": {"Ref": "Managed"}},
            "ManagedVersion": {"Value": {"Fn::GetAtt": ["Managed", "DefaultVersionId"]}},
            "GroupArn": {"Value": {"Fn::GetAtt": ["Group", "Arn"]}},
            "UserArn": {"Value": {"Fn::GetAtt": ["User", "Arn"]}},
            "KeyId": {"Value": {"Ref": "Key"}},
            "ProfileArn": {"Value": {"Fn::GetAtt": ["Profile", "Arn"]}},
            "LinkedName": {"Value": {"Fn::GetAtt": ["Linked", "RoleName"]}},
            "PolicyId": {"Value": {"Ref": "Policy"}},
        },
    })


def deploy(cfn, name, body, create=False):
    if create:
        cfn.create_stack(StackName=name, TemplateBody=body, Capabilities=CAPS)
        cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=WAIT)
    else:
        cfn.update_stack(StackName=name, TemplateBody=body, Capabilities=CAPS)
        cfn.get_waiter("stack_update_complete").wait(StackName=name, WaiterConfig=WAIT)
    return outputs(cfn, name)


def attached(iam, role):
    return [a["PolicyArn"] for a in iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"]]


def test_every_iam_type_create_update_replace_delete(cfn, iam):
    p = f"i{uid()}"
    name = f"iam-{p}"

    # --- create
    out = deploy(cfn, name, template(p), create=True)
    role = iam.get_role(RoleName=f"{p}-role")["Role"]
    assert out["RoleArn"] == role["Arn"] == f"arn:aws:iam::000000000000:role/svc/{p}-role"
    assert out["RoleId"] == role["RoleId"]
    assert role["Description"] == "v1" and role["AssumeRolePolicyDocument"] == TRUST
    assert role["Tags"] == [{"Key": "tag", "Value": "one"}]
    assert iam.list_role_policies(RoleName=f"{p}-role")["PolicyNames"] == ["first", f"{p}-inline"]
    managed_arn = out["ManagedArn"]
    assert managed_arn == f"arn:aws:iam::000000000000:policy/stack/{p}-managed"
    assert attached(iam, f"{p}-role") == [managed_arn, BASIC]
    assert out["ManagedVersion"] == "v1"
    ents = iam.list_entities_for_policy(PolicyArn=managed_arn)
    assert [u["UserName"] for u in ents["PolicyUsers"]] == [f"{p}-user"]
    assert [r["RoleName"] for r in ents["PolicyRoles"]] == [f"{p}-role"]
    assert iam.get_group_policy(GroupName=f"{p}-group", PolicyName=f"{p}-inline")["PolicyDocument"] == doc("s3:GetObject")
    assert [u["UserName"] for u in iam.get_group(GroupName=f"{p}-group")["Users"]] == [f"{p}-user"]
    assert out["GroupArn"] == iam.get_group(GroupName=f"{p}-group")["Group"]["Arn"]
    assert out["UserArn"] == iam.get_user(UserName=f"{p}-user")["User"]["Arn"]
    keys = iam.list_access_keys(UserName=f"{p}-user")["AccessKeyMetadata"]
    assert [k["AccessKeyId"] for k in keys] == [out["KeyId"]]
    profile_name = physical(cfn, name)["Profile"]
    assert profile_name.startswith(f"{name}-Profile-")
    prof = iam.get_instance_profile(InstanceProfileName=profile_name)["InstanceProfile"]
    assert prof["Arn"] == out["ProfileArn"] and [r["RoleName"] for r in prof["Roles"]] == [f"{p}-role"]
    assert out["LinkedName"] == f"AWSServiceRoleForElasticBeanstalk_{p}"
    linked = iam.get_role(RoleName=out["LinkedName"])["Role"]
    assert linked["Path"] == "/aws-service-role/elasticbeanstalk.amazonaws.com/"

    # --- update in place: role policies swapped, description and tags changed, new managed
    # policy document (a new default version), the inline policy's document changed.
    out2 = deploy(cfn, name, template(p, role_policies=("second",), description="v2", tag="two",
                                      policy_action="s3:PutObject", managed_action="sqs:*",
                                      group_arns=[READ_ONLY], managed_groups=True))
    role2 = iam.get_role(RoleName=f"{p}-role")["Role"]
    assert role2["RoleId"] == role["RoleId"]  # same role, changed in place
    assert role2["Description"] == "v2" and role2["Tags"] == [{"Key": "tag", "Value": "two"}]
    assert iam.list_role_policies(RoleName=f"{p}-role")["PolicyNames"] == [f"{p}-inline", "second"]
    assert iam.get_role_policy(RoleName=f"{p}-role", PolicyName=f"{p}-inline")["PolicyDocument"] == doc("s3:PutObject")
    assert out2["ManagedArn"] == managed_arn and out2["ManagedVersion"] == "v2"
    versions = iam.list_policy_versions(PolicyArn=managed_arn)["Versions"]
    assert [(v["VersionId"], v["IsDefaultVersion"]) for v in versions] == [("v2", True), ("v1", False)]
    assert iam.get_policy_version(PolicyArn=managed_arn, VersionId="v2")["PolicyVersion"]["Document"] == doc("sqs:*")
    assert [a["PolicyArn"] for a in iam.list_attached_group_policies(GroupName=f"{p}-group")["AttachedPolicies"]] == [
        READ_ONLY,
        managed_arn,
    ]
    assert iam.get_user(UserName=f"{p}-user")["User"]["Tags"] == [{"Key": "tag", "Value": "two"}]
    assert iam.get_role(RoleName=out["LinkedName"])["Role"]["Description"] == "v2"

    # --- a failed update: the role's last step (attaching a policy that does not exist) fails;
    # the role is left exactly as it was and the stack rolls back.
    missing = f"arn:aws:iam::000000000000:policy/{p}-missing"
    cfn.update_stack(StackName=name, TemplateBody=template(p, role_policies=("third",), description="v3",
                                                            tag="three", policy_action="s3:PutObject",
                                                            managed_action="sqs:*", extra_arns=[missing],
                                                            group_arns=[READ_ONLY], managed_groups=True),
                     Capabilities=CAPS)
    for _ in range(60):
        status = stack(cfn, name)["StackStatus"]
        if "IN_PROGRESS" not in status:
            break
        time.sleep(1)
    assert status == "UPDATE_ROLLBACK_COMPLETE", status
    reasons = [e.get("ResourceStatusReason", "") for e in cfn.describe_stack_events(StackName=name)["StackEvents"]
               if e["LogicalResourceId"] == "Role" and e["ResourceStatus"] == "UPDATE_FAILED"]
    assert any("does not exist or is not attachable" in r for r in reasons), reasons
    role3 = iam.get_role(RoleName=f"{p}-role")["Role"]
    assert role3["Description"] == "v2" and role3["Tags"] == [{"Key": "tag", "Value": "two"}]
    assert iam.list_role_policies(RoleName=f"{p}-role")["PolicyNames"] == [f"{p}-inline", "second"]
    assert attached(iam, f"{p}-role") == [managed_arn, BASIC]

    # --- replacement: a new RoleName makes a new role; the old one is deleted and the
    # instance profile and inline policy follow the new one.
    out4 = deploy(cfn, name, template(p, role_name=f"{p}-role2", role_policies=("second",), description="v2",
                                      tag="two", policy_action="s3:PutObject", managed_action="sqs:*",
                                      group_arns=[READ_ONLY], managed_groups=True))
    assert gone(iam.get_role, RoleName=f"{p}-role")
    new_role = iam.get_role(RoleName=f"{p}-role2")["Role"]
    assert out4["RoleArn"] == new_role["Arn"] and out4["RoleId"] == new_role["RoleId"] != role["RoleId"]
    assert iam.list_role_policies(RoleName=f"{p}-role2")["PolicyNames"] == [f"{p}-inline", "second"]
    assert attached(iam, f"{p}-role2") == [managed_arn, BASIC]
    prof = iam.get_instance_profile(InstanceProfileName=profile_name)["InstanceProfile"]
    assert [r["RoleName"] for r in prof["Roles"]] == [f"{p}-role2"]

    # --- delete: everything is gone.
    stack_id = stack(cfn, name)["StackId"]
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    assert gone(iam.get_role, RoleName=f"{p}-role2")
    assert gone(iam.get_role, RoleName=out["LinkedName"])
    assert gone(iam.get_policy, PolicyArn=managed_arn)
    assert gone(iam.get_group, GroupName=f"{p}-group")
    assert gone(iam.get_user, UserName=f"{p}-user")
    assert gone(iam.get_instance_profile, InstanceProfileName=profile_name)


def test_generated_names_and_refs(cfn, iam):
    name = f"gen-{uid()}"
    body = json.dumps({
        "Resources": {
            "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": TRUST}},
            "Managed": {"Type": "AWS::IAM::ManagedPolicy",
                        "Properties": {"PolicyDocument": doc("s3:*"), "Roles": [{"Ref": "Role"}]}},
        },
        "Outputs": {"Role": {"Value": {"Ref": "Role"}}, "Managed": {"Value": {"Ref": "Managed"}}},
    })
    cfn.create_stack(StackName=name, TemplateBody=body, Capabilities=["CAPABILITY_IAM"])
    cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=WAIT)
    out = outputs(cfn, name)
    assert out["Role"].startswith(f"{name}-Role-") and len(out["Role"]) <= 64
    assert out["Managed"].startswith(f"arn:aws:iam::000000000000:policy/{name}-Managed-")
    assert attached(iam, out["Role"]) == [out["Managed"]]
    stack_id = stack(cfn, name)["StackId"]
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    assert gone(iam.get_role, RoleName=out["Role"])
    assert gone(iam.get_policy, PolicyArn=out["Managed"])


def test_cli_deploy(cumulo, iam):
    name = f"cli-{uid()}"
    role = f"{name}-role"
    # (A parameter: `deploy` of an update reads GetTemplateSummary's Parameters, which cumulo's
    # CloudFormation omits when a stack has none; reported to the lead.)
    body = {
        "Parameters": {"Env": {"Type": "String", "Default": "dev"}},
        "Resources": {
            "Role": {
                "Type": "AWS::IAM::Role",
                "Properties": {"RoleName": role, "AssumeRolePolicyDocument": TRUST,
                               "Policies": [{"PolicyName": "p", "PolicyDocument": doc("s3:*")}]},
            }
        }
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(body, f)
        path = f.name
    try:
        env = {**os.environ, **CREDS}
        run = lambda *a: subprocess.run(  # noqa: E731
            ["aws", "--endpoint-url", cumulo.endpoint, "cloudformation", "deploy", "--stack-name", name,
             "--template-file", path, *a], capture_output=True, text=True, env=env, timeout=120)
        proc = run()
        assert proc.returncode != 0 and "CAPABILITY" in (proc.stderr + proc.stdout)
        proc = run("--capabilities", "CAPABILITY_NAMED_IAM")
        assert proc.returncode == 0, proc.stderr
        assert iam.get_role_policy(RoleName=role, PolicyName="p")["PolicyDocument"] == doc("s3:*")
        body["Resources"]["Role"]["Properties"]["Policies"][0]["PolicyDocument"] = doc("sqs:*")
        with open(path, "w") as f:
            json.dump(body, f)
        proc = run("--capabilities", "CAPABILITY_NAMED_IAM")
        assert proc.returncode == 0, proc.stderr
        assert iam.get_role_policy(RoleName=role, PolicyName="p")["PolicyDocument"] == doc("sqs:*")
    finally:
        os.unlink(path)
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", name)
    cumulo.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", name)
    assert gone(iam.get_role, RoleName=role)


def test_inline_policy_types_deploy_update_and_delete(cumulo, cfn, iam, tmp_path):
    """AWS::IAM::RolePolicy / UserPolicy / GroupPolicy: each one inline policy on its principal."""
    n = uid()

    def template(action):
        return {
            "Resources": {
                "Role": {"Type": "AWS::IAM::Role", "Properties": {"RoleName": f"r-{n}", "AssumeRolePolicyDocument": TRUST}},
                "User": {"Type": "AWS::IAM::User", "Properties": {"UserName": f"u-{n}"}},
                "Group": {"Type": "AWS::IAM::Group", "Properties": {"GroupName": f"g-{n}"}},
                "RoleP": {"Type": "AWS::IAM::RolePolicy", "Properties": {"RoleName": {"Ref": "Role"}, "PolicyName": "rp", "PolicyDocument": doc(action)}},
                "UserP": {"Type": "AWS::IAM::UserPolicy", "Properties": {"UserName": {"Ref": "User"}, "PolicyName": "up", "PolicyDocument": doc(action)}},
                "GroupP": {"Type": "AWS::IAM::GroupPolicy", "Properties": {"GroupName": {"Ref": "Group"}, "PolicyName": "gp", "PolicyDocument": doc(action)}},
            },
            "Outputs": {"RolePolicyRef": {"Value": {"Ref": "RoleP"}}},
        }

    path = tmp_path / "inline.json"
    name = f"inline-{n}"
    for action in ("s3:GetObject", "sqs:SendMessage"):
        path.write_text(json.dumps(template(action)))
        cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path), "--capabilities", "CAPABILITY_NAMED_IAM")
        assert iam.get_role_policy(RoleName=f"r-{n}", PolicyName="rp")["PolicyDocument"]["Statement"][0]["Action"] == action
        assert iam.get_user_policy(UserName=f"u-{n}", PolicyName="up")["PolicyDocument"]["Statement"][0]["Action"] == action
        assert iam.get_group_policy(GroupName=f"g-{n}", PolicyName="gp")["PolicyDocument"]["Statement"][0]["Action"] == action
    assert outputs(cfn, name)["RolePolicyRef"] == f"rp|r-{n}"
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig=WAIT)
    assert gone(iam.get_role, RoleName=f"r-{n}")
