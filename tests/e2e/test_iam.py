"""IAM end to end: every emulated operation and its errors through boto3 and the AWS CLI,
persistence across a restart, and the documents' URL encoding on the wire."""
import json
import urllib.parse
import uuid

import botocore.exceptions
import pytest

TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
    ],
}
DOC = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
DOC2 = {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": "s3:*", "Resource": "*"}]}


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def iam(cumulo):
    return cumulo.client("iam")


def error(excinfo):
    e = excinfo.value.response
    return e["Error"]["Code"], e["ResponseMetadata"]["HTTPStatusCode"], e["Error"]["Message"]


def make_role(iam, name=None, **kw):
    name = name or f"role-{uid()}"
    return iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(TRUST), **kw)["Role"]


def make_policy(iam, name=None, doc=DOC, **kw):
    name = name or f"pol-{uid()}"
    return iam.create_policy(PolicyName=name, PolicyDocument=json.dumps(doc), **kw)["Policy"]


# --- roles -----------------------------------------------------------------------------------


def test_role_lifecycle(iam):
    name = f"role-{uid()}"
    role = make_role(
        iam, name, Path="/app/", Description="d1", MaxSessionDuration=7200, Tags=[{"Key": "k", "Value": "v"}]
    )
    assert role["Arn"] == f"arn:aws:iam::000000000000:role/app/{name}"
    assert role["RoleId"].startswith("AROA") and len(role["RoleId"]) == 21
    assert role["AssumeRolePolicyDocument"] == TRUST
    got = iam.get_role(RoleName=name.upper())["Role"]  # names are case-insensitive
    assert got["RoleName"] == name
    assert got["Description"] == "d1" and got["MaxSessionDuration"] == 7200
    assert got["Tags"] == [{"Key": "k", "Value": "v"}]

    iam.update_role(RoleName=name, Description="d2", MaxSessionDuration=3600)
    got = iam.get_role(RoleName=name)["Role"]
    assert (got["Description"], got["MaxSessionDuration"]) == ("d2", 3600)
    assert iam.update_role_description(RoleName=name, Description="d3")["Role"]["Description"] == "d3"

    new_trust = dict(TRUST, Statement=[dict(TRUST["Statement"][0], Principal={"Service": "ec2.amazonaws.com"})])
    iam.update_assume_role_policy(RoleName=name, PolicyDocument=json.dumps(new_trust))
    assert iam.get_role(RoleName=name)["Role"]["AssumeRolePolicyDocument"] == new_trust

    iam.tag_role(RoleName=name, Tags=[{"Key": "k", "Value": "v2"}, {"Key": "x", "Value": "y"}])
    assert sorted((t["Key"], t["Value"]) for t in iam.list_role_tags(RoleName=name)["Tags"]) == [
        ("k", "v2"),
        ("x", "y"),
    ]
    iam.untag_role(RoleName=name, TagKeys=["k"])
    assert iam.list_role_tags(RoleName=name)["Tags"] == [{"Key": "x", "Value": "y"}]

    iam.delete_role(RoleName=name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.get_role(RoleName=name)
    assert error(e) == ("NoSuchEntity", 404, f"The role with name {name} cannot be found.")


def test_role_errors(iam):
    name = f"role-{uid()}"
    make_role(iam, name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        make_role(iam, name.upper())
    assert error(e)[:2] == ("EntityAlreadyExists", 409)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        make_role(iam, "bad name")
    assert error(e)[:2] == ("ValidationError", 400)
    assert "roleName" in error(e)[2]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        make_role(iam, f"r-{uid()}", Path="noslash")
    assert error(e)[:2] == ("ValidationError", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.create_role(RoleName=f"r-{uid()}", AssumeRolePolicyDocument="{not json")
    assert error(e)[:2] == ("MalformedPolicyDocument", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        make_role(iam, f"r-{uid()}", MaxSessionDuration=100000)
    assert error(e)[:2] == ("ValidationError", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.update_role(RoleName=f"nope-{uid()}", Description="x")
    assert error(e)[:2] == ("NoSuchEntity", 404)


def test_role_inline_and_managed_policies(iam):
    name = f"role-{uid()}"
    make_role(iam, name)
    iam.put_role_policy(RoleName=name, PolicyName="inline1", PolicyDocument=json.dumps(DOC))
    got = iam.get_role_policy(RoleName=name, PolicyName="inline1")
    assert (got["RoleName"], got["PolicyName"], got["PolicyDocument"]) == (name, "inline1", DOC)
    assert iam.list_role_policies(RoleName=name)["PolicyNames"] == ["inline1"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.get_role_policy(RoleName=name, PolicyName="nope")
    assert error(e) == ("NoSuchEntity", 404, "The role policy with name nope cannot be found.")

    pol = make_policy(iam)
    aws_arn = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
    iam.attach_role_policy(RoleName=name, PolicyArn=pol["Arn"])
    iam.attach_role_policy(RoleName=name, PolicyArn=aws_arn)
    iam.attach_role_policy(RoleName=name, PolicyArn="arn:aws:iam::aws:policy/SomethingNotInTheTable")
    attached = iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]
    assert [a["PolicyArn"] for a in attached] == [
        pol["Arn"],
        aws_arn,
        "arn:aws:iam::aws:policy/SomethingNotInTheTable",
    ]
    assert attached[1]["PolicyName"] == "AWSLambdaBasicExecutionRole"
    only = iam.list_attached_role_policies(RoleName=name, PathPrefix="/service-role/")["AttachedPolicies"]
    assert [a["PolicyArn"] for a in only] == [aws_arn]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.attach_role_policy(RoleName=name, PolicyArn="arn:aws:iam::000000000000:policy/missing")
    assert error(e) == (
        "NoSuchEntity",
        404,
        "Policy arn:aws:iam::000000000000:policy/missing does not exist or is not attachable.",
    )
    assert iam.get_policy(PolicyArn=pol["Arn"])["Policy"]["AttachmentCount"] == 1

    # DeleteConflict exactly while something is left, in AWS's order.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_role(RoleName=name)
    assert error(e) == ("DeleteConflict", 409, "Cannot delete entity, must delete policies first.")
    iam.delete_role_policy(RoleName=name, PolicyName="inline1")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_role_policy(RoleName=name, PolicyName="inline1")
    assert error(e)[:2] == ("NoSuchEntity", 404)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_role(RoleName=name)
    assert error(e) == ("DeleteConflict", 409, "Cannot delete entity, must detach all policies first.")
    for a in attached:
        iam.detach_role_policy(RoleName=name, PolicyArn=a["PolicyArn"])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.detach_role_policy(RoleName=name, PolicyArn=pol["Arn"])
    assert error(e)[:2] == ("NoSuchEntity", 404)
    iam.delete_role(RoleName=name)


def test_permissions_boundary(iam):
    name = f"role-{uid()}"
    boundary = make_policy(iam)
    make_role(iam, name, PermissionsBoundary=boundary["Arn"])
    assert iam.get_role(RoleName=name)["Role"]["PermissionsBoundary"] == {
        "PermissionsBoundaryType": "Policy",
        "PermissionsBoundaryArn": boundary["Arn"],
    }
    assert iam.get_policy(PolicyArn=boundary["Arn"])["Policy"]["PermissionsBoundaryUsageCount"] == 1
    iam.delete_role_permissions_boundary(RoleName=name)
    assert "PermissionsBoundary" not in iam.get_role(RoleName=name)["Role"]
    iam.put_role_permissions_boundary(RoleName=name, PermissionsBoundary="arn:aws:iam::aws:policy/PowerUserAccess")
    assert (
        iam.get_role(RoleName=name)["Role"]["PermissionsBoundary"]["PermissionsBoundaryArn"]
        == "arn:aws:iam::aws:policy/PowerUserAccess"
    )
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.put_role_permissions_boundary(
            RoleName=name, PermissionsBoundary="arn:aws:iam::000000000000:policy/none"
        )
    assert error(e)[:2] == ("NoSuchEntity", 404)


def test_list_roles_path_prefix_and_pagination(iam):
    prefix = f"/p{uid()}/"
    names = sorted(f"r{i}-{uid()}" for i in range(5))
    for n in names:
        make_role(iam, n, Path=prefix)
    seen, marker = [], None
    while True:
        kw = {"PathPrefix": prefix, "MaxItems": 2}
        if marker:
            kw["Marker"] = marker
        page = iam.list_roles(**kw)
        assert len(page["Roles"]) <= 2
        seen += [r["RoleName"] for r in page["Roles"]]
        assert "Tags" not in page["Roles"][0]
        if not page["IsTruncated"]:
            assert "Marker" not in page
            break
        marker = page["Marker"]
    assert seen == names
    paginated = [
        r["RoleName"]
        for p in iam.get_paginator("list_roles").paginate(PathPrefix=prefix, PaginationConfig={"PageSize": 3})
        for r in p["Roles"]
    ]
    assert paginated == names
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.list_roles(MaxItems=1001)
    assert error(e)[:2] == ("ValidationError", 400)


# --- users, keys, groups -------------------------------------------------------------------


def test_user_lifecycle_and_access_keys(iam):
    name = f"user-{uid()}"
    user = iam.create_user(UserName=name, Path="/people/", Tags=[{"Key": "team", "Value": "a"}])["User"]
    assert user["UserId"].startswith("AIDA")
    assert user["Arn"] == f"arn:aws:iam::000000000000:user/people/{name}"
    assert iam.get_user(UserName=name)["User"]["Tags"] == [{"Key": "team", "Value": "a"}]
    assert name in [u["UserName"] for u in iam.list_users(PathPrefix="/people/")["Users"]]
    iam.tag_user(UserName=name, Tags=[{"Key": "x", "Value": "1"}])
    iam.untag_user(UserName=name, TagKeys=["team"])
    assert iam.list_user_tags(UserName=name)["Tags"] == [{"Key": "x", "Value": "1"}]

    k1 = iam.create_access_key(UserName=name)["AccessKey"]
    assert k1["AccessKeyId"].startswith("AKIA") and len(k1["AccessKeyId"]) == 20
    assert len(k1["SecretAccessKey"]) == 40 and k1["Status"] == "Active"
    k2 = iam.create_access_key(UserName=name)["AccessKey"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.create_access_key(UserName=name)
    assert error(e) == ("LimitExceeded", 409, "Cannot exceed quota for AccessKeysPerUser: 2")
    iam.update_access_key(UserName=name, AccessKeyId=k1["AccessKeyId"], Status="Inactive")
    meta = {k["AccessKeyId"]: k for k in iam.list_access_keys(UserName=name)["AccessKeyMetadata"]}
    assert meta[k1["AccessKeyId"]]["Status"] == "Inactive"
    assert "SecretAccessKey" not in meta[k2["AccessKeyId"]]

    iam.put_user_policy(UserName=name, PolicyName="up", PolicyDocument=json.dumps(DOC))
    assert iam.get_user_policy(UserName=name, PolicyName="up")["PolicyDocument"] == DOC
    iam.attach_user_policy(UserName=name, PolicyArn="arn:aws:iam::aws:policy/ReadOnlyAccess")
    assert iam.list_attached_user_policies(UserName=name)["AttachedPolicies"] == [
        {"PolicyName": "ReadOnlyAccess", "PolicyArn": "arn:aws:iam::aws:policy/ReadOnlyAccess"}
    ]
    iam.create_login_profile(UserName=name, Password="S3cret!pass", PasswordResetRequired=True)
    assert iam.get_login_profile(UserName=name)["LoginProfile"]["PasswordResetRequired"] is True
    iam.update_login_profile(UserName=name, PasswordResetRequired=False)
    assert iam.get_login_profile(UserName=name)["LoginProfile"]["PasswordResetRequired"] is False
    group = f"g-{uid()}"
    iam.create_group(GroupName=group)
    iam.add_user_to_group(GroupName=group, UserName=name)

    expected = [
        "Cannot delete entity, must delete login profile first.",
        "Cannot delete entity, must delete access keys first.",
        "Cannot delete entity, must delete policies first.",
        "Cannot delete entity, must detach all policies first.",
        "Cannot delete entity, must remove users from group first.",
    ]
    cleanups = [
        lambda: iam.delete_login_profile(UserName=name),
        lambda: [
            iam.delete_access_key(UserName=name, AccessKeyId=k["AccessKeyId"]) for k in (k1, k2)
        ],
        lambda: iam.delete_user_policy(UserName=name, PolicyName="up"),
        lambda: iam.detach_user_policy(UserName=name, PolicyArn="arn:aws:iam::aws:policy/ReadOnlyAccess"),
        lambda: iam.remove_user_from_group(GroupName=group, UserName=name),
    ]
    for message, cleanup in zip(expected, cleanups):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            iam.delete_user(UserName=name)
        assert error(e) == ("DeleteConflict", 409, message)
        cleanup()
    iam.delete_user(UserName=name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.get_user(UserName=name)
    assert error(e) == ("NoSuchEntity", 404, f"The user with name {name} cannot be found.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_access_key(UserName=f"nope-{uid()}", AccessKeyId="AKIAXXXXXXXXXXXXXXXX")
    assert error(e)[:2] == ("NoSuchEntity", 404)


def test_update_user_rename_keeps_groups(iam):
    old, new, group = f"u-{uid()}", f"u-{uid()}", f"g-{uid()}"
    iam.create_user(UserName=old)
    iam.create_group(GroupName=group)
    iam.add_user_to_group(GroupName=group, UserName=old)
    iam.update_user(UserName=old, NewUserName=new, NewPath="/moved/")
    user = iam.get_user(UserName=new)["User"]
    assert user["Arn"] == f"arn:aws:iam::000000000000:user/moved/{new}"
    assert [u["UserName"] for u in iam.get_group(GroupName=group)["Users"]] == [new]
    assert [g["GroupName"] for g in iam.list_groups_for_user(UserName=new)["Groups"]] == [group]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.get_user(UserName=old)
    assert error(e)[:2] == ("NoSuchEntity", 404)


def test_group_lifecycle(iam):
    group, user = f"g-{uid()}", f"u-{uid()}"
    g = iam.create_group(GroupName=group, Path="/teams/")["Group"]
    assert g["GroupId"].startswith("AGPA")
    assert g["Arn"] == f"arn:aws:iam::000000000000:group/teams/{group}"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.create_group(GroupName=group)
    assert error(e) == ("EntityAlreadyExists", 409, f"Group with name {group} already exists.")
    iam.create_user(UserName=user)
    iam.add_user_to_group(GroupName=group, UserName=user)
    assert [u["UserName"] for u in iam.get_group(GroupName=group)["Users"]] == [user]
    assert group in [x["GroupName"] for x in iam.list_groups(PathPrefix="/teams/")["Groups"]]
    iam.put_group_policy(GroupName=group, PolicyName="gp", PolicyDocument=json.dumps(DOC))
    assert iam.list_group_policies(GroupName=group)["PolicyNames"] == ["gp"]
    assert iam.get_group_policy(GroupName=group, PolicyName="gp")["PolicyDocument"] == DOC
    pol = make_policy(iam)
    iam.attach_group_policy(GroupName=group, PolicyArn=pol["Arn"])
    assert [a["PolicyArn"] for a in iam.list_attached_group_policies(GroupName=group)["AttachedPolicies"]] == [
        pol["Arn"]
    ]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_group(GroupName=group)
    assert error(e) == ("DeleteConflict", 409, "Cannot delete entity, must remove users from group first.")
    iam.remove_user_from_group(GroupName=group, UserName=user)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.remove_user_from_group(GroupName=group, UserName=user)
    assert error(e)[:2] == ("NoSuchEntity", 404)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_group(GroupName=group)
    assert error(e) == ("DeleteConflict", 409, "Cannot delete entity, must delete policies first.")
    iam.delete_group_policy(GroupName=group, PolicyName="gp")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_group(GroupName=group)
    assert error(e) == ("DeleteConflict", 409, "Cannot delete entity, must detach all policies first.")
    iam.detach_group_policy(GroupName=group, PolicyArn=pol["Arn"])
    iam.delete_group(GroupName=group)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.get_group(GroupName=group)
    assert error(e) == ("NoSuchEntity", 404, f"The group with name {group} cannot be found.")


# --- managed policies ------------------------------------------------------------------------


def test_managed_policy_versions(iam):
    pol = make_policy(iam, Path="/team/", Description="desc", Tags=[{"Key": "a", "Value": "b"}])
    arn = pol["Arn"]
    assert pol["PolicyId"].startswith("ANPA") and pol["DefaultVersionId"] == "v1"
    assert arn == f"arn:aws:iam::000000000000:policy/team/{pol['PolicyName']}"
    got = iam.get_policy(PolicyArn=arn)["Policy"]
    assert (got["Description"], got["AttachmentCount"], got["IsAttachable"]) == ("desc", 0, True)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        make_policy(iam, pol["PolicyName"])
    assert error(e) == (
        "EntityAlreadyExists",
        409,
        f"A policy called {pol['PolicyName']} already exists. Duplicate names are not allowed.",
    )

    v2 = iam.create_policy_version(PolicyArn=arn, PolicyDocument=json.dumps(DOC2), SetAsDefault=True)["PolicyVersion"]
    assert (v2["VersionId"], v2["IsDefaultVersion"]) == ("v2", True)
    assert iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"] == "v2"
    assert iam.get_policy_version(PolicyArn=arn, VersionId="v1")["PolicyVersion"]["Document"] == DOC
    assert iam.get_policy_version(PolicyArn=arn, VersionId="v2")["PolicyVersion"]["Document"] == DOC2
    for _ in range(3):
        iam.create_policy_version(PolicyArn=arn, PolicyDocument=json.dumps(DOC))
    versions = iam.list_policy_versions(PolicyArn=arn)["Versions"]
    assert [v["VersionId"] for v in versions] == ["v5", "v4", "v3", "v2", "v1"]
    assert [v["IsDefaultVersion"] for v in versions] == [False, False, False, True, False]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.create_policy_version(PolicyArn=arn, PolicyDocument=json.dumps(DOC))
    assert error(e)[:2] == ("LimitExceeded", 409)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_policy_version(PolicyArn=arn, VersionId="v2")
    assert error(e) == ("DeleteConflict", 409, "Cannot delete the default version of a policy.")
    iam.delete_policy_version(PolicyArn=arn, VersionId="v1")
    v6 = iam.create_policy_version(PolicyArn=arn, PolicyDocument=json.dumps(DOC))["PolicyVersion"]
    assert v6["VersionId"] == "v6"  # ids are never reused
    iam.set_default_policy_version(PolicyArn=arn, VersionId="v6")
    assert iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"] == "v6"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.get_policy_version(PolicyArn=arn, VersionId="v1")
    assert error(e)[:2] == ("NoSuchEntity", 404)

    iam.tag_policy(PolicyArn=arn, Tags=[{"Key": "c", "Value": "d"}])
    iam.untag_policy(PolicyArn=arn, TagKeys=["a"])
    assert iam.list_policy_tags(PolicyArn=arn)["Tags"] == [{"Key": "c", "Value": "d"}]

    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_policy(PolicyArn=arn)
    assert error(e)[:2] == ("DeleteConflict", 409)
    for v in ("v2", "v3", "v4", "v5"):
        iam.delete_policy_version(PolicyArn=arn, VersionId=v)
    role = make_role(iam)
    iam.attach_role_policy(RoleName=role["RoleName"], PolicyArn=arn)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_policy(PolicyArn=arn)
    assert error(e) == ("DeleteConflict", 409, "Cannot delete a policy attached to entities.")
    iam.detach_role_policy(RoleName=role["RoleName"], PolicyArn=arn)
    iam.delete_policy(PolicyArn=arn)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.get_policy(PolicyArn=arn)
    assert error(e) == ("NoSuchEntity", 404, f"Policy {arn} does not exist or is not attachable.")


def test_list_policies_and_entities(iam):
    prefix = f"/l{uid()}/"
    attached = make_policy(iam, Path=prefix)
    unattached = make_policy(iam, Path=prefix)
    role, user, group = make_role(iam), f"u-{uid()}", f"g-{uid()}"
    iam.create_user(UserName=user)
    iam.create_group(GroupName=group)
    iam.attach_role_policy(RoleName=role["RoleName"], PolicyArn=attached["Arn"])
    iam.attach_user_policy(UserName=user, PolicyArn=attached["Arn"])
    iam.attach_group_policy(GroupName=group, PolicyArn=attached["Arn"])

    local = iam.list_policies(Scope="Local", PathPrefix=prefix)["Policies"]
    assert sorted(p["Arn"] for p in local) == sorted([attached["Arn"], unattached["Arn"]])
    only = iam.list_policies(Scope="Local", PathPrefix=prefix, OnlyAttached=True)["Policies"]
    assert [p["Arn"] for p in only] == [attached["Arn"]] and only[0]["AttachmentCount"] == 3
    aws = iam.list_policies(Scope="AWS")["Policies"]
    assert "arn:aws:iam::aws:policy/AdministratorAccess" in [p["Arn"] for p in aws]
    assert all(p["Arn"].startswith("arn:aws:iam::aws:policy/") for p in aws)
    admin = iam.get_policy(PolicyArn="arn:aws:iam::aws:policy/AdministratorAccess")["Policy"]
    doc = iam.get_policy_version(PolicyArn=admin["Arn"], VersionId=admin["DefaultVersionId"])
    assert doc["PolicyVersion"]["Document"]["Statement"][0]["Action"] == "*"

    ents = iam.list_entities_for_policy(PolicyArn=attached["Arn"])
    assert [r["RoleName"] for r in ents["PolicyRoles"]] == [role["RoleName"]]
    assert ents["PolicyRoles"][0]["RoleId"] == role["RoleId"]
    assert [u["UserName"] for u in ents["PolicyUsers"]] == [user]
    assert [g["GroupName"] for g in ents["PolicyGroups"]] == [group]
    roles_only = iam.list_entities_for_policy(PolicyArn=attached["Arn"], EntityFilter="Role")
    assert roles_only["PolicyUsers"] == [] and len(roles_only["PolicyRoles"]) == 1
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.list_entities_for_policy(PolicyArn="arn:aws:iam::000000000000:policy/none")
    assert error(e)[:2] == ("NoSuchEntity", 404)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        make_policy(iam, doc={"Statement": [{"Effect": "Perhaps"}]})
    assert error(e)[:2] == ("MalformedPolicyDocument", 400)


# --- instance profiles and service-linked roles ----------------------------------------------


def test_instance_profiles(iam):
    name, role = f"ip-{uid()}", make_role(iam)
    p = iam.create_instance_profile(InstanceProfileName=name, Path="/ip/")["InstanceProfile"]
    assert p["InstanceProfileId"].startswith("AIPA") and p["Roles"] == []
    assert p["Arn"] == f"arn:aws:iam::000000000000:instance-profile/ip/{name}"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.create_instance_profile(InstanceProfileName=name)
    assert error(e)[:2] == ("EntityAlreadyExists", 409)
    iam.add_role_to_instance_profile(InstanceProfileName=name, RoleName=role["RoleName"])
    got = iam.get_instance_profile(InstanceProfileName=name)["InstanceProfile"]
    assert [r["RoleName"] for r in got["Roles"]] == [role["RoleName"]]
    assert got["Roles"][0]["AssumeRolePolicyDocument"] == TRUST
    other = make_role(iam)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.add_role_to_instance_profile(InstanceProfileName=name, RoleName=other["RoleName"])
    assert error(e)[:2] == ("LimitExceeded", 409)
    listed = iam.list_instance_profiles_for_role(RoleName=role["RoleName"])["InstanceProfiles"]
    assert [x["InstanceProfileName"] for x in listed] == [name]
    assert name in [x["InstanceProfileName"] for x in iam.list_instance_profiles(PathPrefix="/ip/")["InstanceProfiles"]]
    iam.tag_instance_profile(InstanceProfileName=name, Tags=[{"Key": "a", "Value": "1"}])
    assert iam.list_instance_profile_tags(InstanceProfileName=name)["Tags"] == [{"Key": "a", "Value": "1"}]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_role(RoleName=role["RoleName"])
    assert error(e) == (
        "DeleteConflict",
        409,
        "Cannot delete entity, must remove roles from instance profile first.",
    )
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_instance_profile(InstanceProfileName=name)
    assert error(e)[:2] == ("DeleteConflict", 409)
    iam.remove_role_from_instance_profile(InstanceProfileName=name, RoleName=role["RoleName"])
    iam.delete_instance_profile(InstanceProfileName=name)
    iam.delete_role(RoleName=role["RoleName"])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.get_instance_profile(InstanceProfileName=name)
    assert error(e) == ("NoSuchEntity", 404, f"Instance Profile {name} cannot be found.")


def test_service_linked_roles(iam):
    suffix = uid()
    role = iam.create_service_linked_role(
        AWSServiceName="autoscaling.amazonaws.com", Description="slr", CustomSuffix=suffix
    )["Role"]
    assert role["RoleName"] == f"AWSServiceRoleForAutoScaling_{suffix}"
    assert role["Path"] == "/aws-service-role/autoscaling.amazonaws.com/"
    assert role["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {
        "Service": ["autoscaling.amazonaws.com"]
    }
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_role(RoleName=role["RoleName"])
    assert error(e)[:2] == ("UnmodifiableEntity", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.put_role_policy(RoleName=role["RoleName"], PolicyName="p", PolicyDocument=json.dumps(DOC))
    assert error(e)[:2] == ("UnmodifiableEntity", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.create_service_linked_role(AWSServiceName="not-a-service")
    assert error(e)[:2] == ("InvalidInput", 400)
    task = iam.delete_service_linked_role(RoleName=role["RoleName"])["DeletionTaskId"]
    assert task.startswith(f"task/aws-service-role/autoscaling.amazonaws.com/{role['RoleName']}/")
    assert iam.get_service_linked_role_deletion_status(DeletionTaskId=task)["Status"] == "SUCCEEDED"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.get_role(RoleName=role["RoleName"])
    assert error(e)[:2] == ("NoSuchEntity", 404)
    plain = make_role(iam)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_service_linked_role(RoleName=plain["RoleName"])
    assert error(e)[:2] == ("InvalidInput", 400)


# --- wire, CLI, persistence ------------------------------------------------------------------


def test_documents_are_url_encoded_on_the_wire(cumulo, iam):
    name = f"role-{uid()}"
    text = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}'
    iam.create_role(RoleName=name, AssumeRolePolicyDocument=text)
    body = (
        f"Action=GetRole&Version=2010-05-08&RoleName={name}"
    ).encode()
    r = cumulo.raw(
        "POST",
        "/",
        headers=[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Authorization", "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=x"),
            ("Connection", "close"),
        ],
        body=body,
    )
    assert r.status == 200
    xml = r.body.decode()
    encoded = xml.split("<AssumeRolePolicyDocument>")[1].split("</AssumeRolePolicyDocument>")[0]
    assert "%7B%22Version%22%3A%20%222012-10-17%22" in encoded
    assert urllib.parse.unquote(encoded) == text  # returned exactly as given


def test_unknown_and_unimplemented_actions(cumulo):
    def call(action):
        return cumulo.raw(
            "POST",
            "/",
            headers=[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Authorization", "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=x"),
                ("Connection", "close"),
            ],
            body=f"Action={action}&Version=2010-05-08".encode(),
        )

    r = call("ListSAMLProviders")
    assert r.status == 501 and "ListSAMLProviders" in r.body.decode()
    r = call("NoSuchThing")
    assert r.status == 400 and r.error_code() == "InvalidAction"


def test_cli(cumulo):
    name = f"cli-{uid()}"
    out = cumulo.aws("iam", "create-role", "--role-name", name, "--assume-role-policy-document", json.dumps(TRUST))
    assert out["Role"]["AssumeRolePolicyDocument"] == TRUST
    cumulo.aws("iam", "put-role-policy", "--role-name", name, "--policy-name", "p", "--policy-document", json.dumps(DOC))
    assert cumulo.aws("iam", "get-role-policy", "--role-name", name, "--policy-name", "p")["PolicyDocument"] == DOC
    pol = cumulo.aws("iam", "create-policy", "--policy-name", name, "--policy-document", json.dumps(DOC))["Policy"]
    cumulo.aws("iam", "attach-role-policy", "--role-name", name, "--policy-arn", pol["Arn"])
    names = [r["RoleName"] for r in cumulo.aws("iam", "list-roles")["Roles"]]
    assert name in names
    assert cumulo.aws("iam", "list-attached-role-policies", "--role-name", name)["AttachedPolicies"][0]["PolicyArn"] == pol["Arn"]
    proc = cumulo.aws("iam", "delete-role", "--role-name", name, check=False)
    assert proc.returncode != 0 and "DeleteConflict" in proc.stderr
    proc = cumulo.aws("iam", "get-role", "--role-name", f"none-{uid()}", check=False)
    assert proc.returncode != 0 and "NoSuchEntity" in proc.stderr
    cumulo.aws("iam", "create-user", "--user-name", name)
    key = cumulo.aws("iam", "create-access-key", "--user-name", name)["AccessKey"]
    assert key["UserName"] == name
    cumulo.aws("iam", "create-group", "--group-name", name)
    cumulo.aws("iam", "add-user-to-group", "--group-name", name, "--user-name", name)
    assert cumulo.aws("iam", "list-groups-for-user", "--user-name", name)["Groups"][0]["GroupName"] == name
    cumulo.aws("iam", "create-instance-profile", "--instance-profile-name", name)
    cumulo.aws("iam", "add-role-to-instance-profile", "--instance-profile-name", name, "--role-name", name)
    got = cumulo.aws("iam", "get-instance-profile", "--instance-profile-name", name)
    assert got["InstanceProfile"]["Roles"][0]["RoleName"] == name
    v = cumulo.aws("iam", "create-policy-version", "--policy-arn", pol["Arn"], "--policy-document", json.dumps(DOC2), "--set-as-default")
    assert v["PolicyVersion"]["VersionId"] == "v2"
    assert cumulo.aws("iam", "get-policy-version", "--policy-arn", pol["Arn"], "--version-id", "v2")["PolicyVersion"]["Document"] == DOC2


def test_state_survives_restart(fresh_server):
    server = fresh_server.start()
    iam = server.client("iam")
    role = make_role(iam, "persisted-role", Tags=[{"Key": "a", "Value": "b"}])
    iam.put_role_policy(RoleName="persisted-role", PolicyName="p", PolicyDocument=json.dumps(DOC))
    pol = make_policy(iam, "persisted-policy")
    iam.create_policy_version(PolicyArn=pol["Arn"], PolicyDocument=json.dumps(DOC2), SetAsDefault=True)
    iam.attach_role_policy(RoleName="persisted-role", PolicyArn=pol["Arn"])
    iam.create_user(UserName="persisted-user")
    key = iam.create_access_key(UserName="persisted-user")["AccessKey"]
    iam.create_group(GroupName="persisted-group")
    iam.add_user_to_group(GroupName="persisted-group", UserName="persisted-user")
    iam.create_instance_profile(InstanceProfileName="persisted-ip")
    iam.add_role_to_instance_profile(InstanceProfileName="persisted-ip", RoleName="persisted-role")
    server.kill9()

    server = fresh_server.start()
    iam = server.client("iam")
    got = iam.get_role(RoleName="persisted-role")["Role"]
    assert (got["RoleId"], got["Tags"]) == (role["RoleId"], [{"Key": "a", "Value": "b"}])
    assert iam.get_role_policy(RoleName="persisted-role", PolicyName="p")["PolicyDocument"] == DOC
    assert iam.get_policy(PolicyArn=pol["Arn"])["Policy"]["DefaultVersionId"] == "v2"
    assert iam.list_attached_role_policies(RoleName="persisted-role")["AttachedPolicies"][0]["PolicyArn"] == pol["Arn"]
    assert iam.list_access_keys(UserName="persisted-user")["AccessKeyMetadata"][0]["AccessKeyId"] == key["AccessKeyId"]
    assert [u["UserName"] for u in iam.get_group(GroupName="persisted-group")["Users"]] == ["persisted-user"]
    ip = iam.get_instance_profile(InstanceProfileName="persisted-ip")["InstanceProfile"]
    assert [r["RoleName"] for r in ip["Roles"]] == ["persisted-role"]


def test_group_rename_user_boundary_and_root_caller(iam):
    group, new_group, user = f"g-{uid()}", f"g-{uid()}", f"u-{uid()}"
    iam.create_group(GroupName=group)
    iam.create_user(UserName=user)
    iam.add_user_to_group(GroupName=group, UserName=user)
    iam.update_group(GroupName=group, NewGroupName=new_group, NewPath="/renamed/")
    got = iam.get_group(GroupName=new_group)
    assert got["Group"]["Arn"] == f"arn:aws:iam::000000000000:group/renamed/{new_group}"
    assert [u["UserName"] for u in got["Users"]] == [user]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.get_group(GroupName=group)
    assert error(e)[:2] == ("NoSuchEntity", 404)

    iam.put_user_permissions_boundary(UserName=user, PermissionsBoundary="arn:aws:iam::aws:policy/ReadOnlyAccess")
    assert iam.get_user(UserName=user)["User"]["PermissionsBoundary"]["PermissionsBoundaryArn"] == (
        "arn:aws:iam::aws:policy/ReadOnlyAccess"
    )
    iam.delete_user_permissions_boundary(UserName=user)
    assert "PermissionsBoundary" not in iam.get_user(UserName=user)["User"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.delete_user_permissions_boundary(UserName=user)
    assert error(e)[:2] == ("NoSuchEntity", 404)

    # Without UserName, GetUser answers for the caller: the account's root with these keys.
    root = iam.get_user()["User"]
    assert (root["UserId"], root["Arn"]) == ("000000000000", "arn:aws:iam::000000000000:root")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.list_access_keys()
    assert error(e)[:2] == ("ValidationError", 400)


def test_list_policies_pagination(iam):
    prefix = f"/pg{uid()}/"
    arns = [make_policy(iam, f"pg{i}-{uid()}", Path=prefix)["Arn"] for i in range(4)]
    pages = list(iam.get_paginator("list_policies").paginate(
        Scope="Local", PathPrefix=prefix, PaginationConfig={"PageSize": 3}
    ))
    assert [len(p["Policies"]) for p in pages] == [3, 1]
    assert sorted(p["Arn"] for page in pages for p in page["Policies"]) == sorted(arns)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        iam.list_policies(Scope="Local", Marker="not-a-marker")
    assert error(e)[:2] == ("ValidationError", 400)


def test_cli_more_operations_and_errors(cumulo):
    name = f"cli2-{uid()}"
    cumulo.aws("iam", "create-role", "--role-name", name, "--path", "/cli/",
               "--assume-role-policy-document", json.dumps(TRUST), "--tags", "Key=a,Value=b")
    cumulo.aws("iam", "update-role", "--role-name", name, "--description", "via cli", "--max-session-duration", "7200")
    role = cumulo.aws("iam", "get-role", "--role-name", name)["Role"]
    assert (role["Description"], role["MaxSessionDuration"], role["Path"]) == ("via cli", 7200, "/cli/")
    cumulo.aws("iam", "tag-role", "--role-name", name, "--tags", "Key=c,Value=d")
    tags = cumulo.aws("iam", "list-role-tags", "--role-name", name)["Tags"]
    assert sorted(t["Key"] for t in tags) == ["a", "c"]
    listed = cumulo.aws("iam", "list-roles", "--path-prefix", "/cli/")["Roles"]
    assert name in [r["RoleName"] for r in listed]

    pol = cumulo.aws("iam", "create-policy", "--policy-name", name, "--policy-document", json.dumps(DOC))["Policy"]
    cumulo.aws("iam", "create-policy-version", "--policy-arn", pol["Arn"], "--policy-document", json.dumps(DOC2),
               "--set-as-default")
    versions = cumulo.aws("iam", "list-policy-versions", "--policy-arn", pol["Arn"])["Versions"]
    assert [v["VersionId"] for v in versions] == ["v2", "v1"]
    proc = cumulo.aws("iam", "delete-policy-version", "--policy-arn", pol["Arn"], "--version-id", "v2", check=False)
    assert proc.returncode != 0 and "DeleteConflict" in proc.stderr
    proc = cumulo.aws("iam", "delete-policy", "--policy-arn", pol["Arn"], check=False)
    assert proc.returncode != 0 and "DeleteConflict" in proc.stderr
    cumulo.aws("iam", "delete-policy-version", "--policy-arn", pol["Arn"], "--version-id", "v1")
    cumulo.aws("iam", "delete-policy", "--policy-arn", pol["Arn"])

    proc = cumulo.aws("iam", "create-role", "--role-name", name, "--assume-role-policy-document",
                      json.dumps(TRUST), check=False)
    assert proc.returncode != 0 and "EntityAlreadyExists" in proc.stderr
    proc = cumulo.aws("iam", "put-role-policy", "--role-name", name, "--policy-name", "p",
                      "--policy-document", "{broken", check=False)
    assert proc.returncode != 0 and "MalformedPolicyDocument" in proc.stderr

    slr = cumulo.aws("iam", "create-service-linked-role", "--aws-service-name", "ecs.amazonaws.com",
                     "--custom-suffix", name)["Role"]
    assert slr["RoleName"] == f"AWSServiceRoleForECS_{name}"
    task = cumulo.aws("iam", "delete-service-linked-role", "--role-name", slr["RoleName"])["DeletionTaskId"]
    status = cumulo.aws("iam", "get-service-linked-role-deletion-status", "--deletion-task-id", task)
    assert status["Status"] == "SUCCEEDED"
    cumulo.aws("iam", "delete-role", "--role-name", name)
    proc = cumulo.aws("iam", "delete-role", "--role-name", name, check=False)
    assert proc.returncode != 0 and "NoSuchEntity" in proc.stderr
