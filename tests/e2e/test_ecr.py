"""ECR end to end: repositories, policies, lifecycle policies, tags, image manifests, the
authorization token, the clear refusal of layer pushes, and AWS::ECR::Repository in stacks
(including the CDK bootstrap template's container assets repository)."""
import base64
import hashlib
import json
import uuid

import botocore.exceptions
import pytest

from conftest import CumuloServer

WAIT = {"Delay": 1, "MaxAttempts": 60}
ACCOUNT = "000000000000"


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def ecr(cumulo):
    return cumulo.client("ecr")


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


def manifest(n):
    return json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "size": 100,
                   "digest": "sha256:" + "0" * 64},
        "layers": [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "size": 1000 + n,
                    "digest": "sha256:" + f"{n:064x}"}],
    })


def code(e):
    return e.value.response["Error"]["Code"]


LIFECYCLE = json.dumps({"rules": [{"rulePriority": 1, "description": "expire untagged",
                                   "selection": {"tagStatus": "untagged", "countType": "sinceImagePushed",
                                                 "countUnit": "days", "countNumber": 365},
                                   "action": {"type": "expire"}}]})


def test_repository_lifecycle(ecr):
    name = f"team/app-{uid()}"
    repo = ecr.create_repository(repositoryName=name, imageTagMutability="IMMUTABLE",
                                 imageScanningConfiguration={"scanOnPush": True},
                                 tags=[{"Key": "k", "Value": "v"}])["repository"]
    assert repo["repositoryArn"] == f"arn:aws:ecr:us-east-1:{ACCOUNT}:repository/{name}"
    assert repo["repositoryUri"] == f"{ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/{name}"
    assert repo["registryId"] == ACCOUNT and repo["imageTagMutability"] == "IMMUTABLE"
    assert repo["imageScanningConfiguration"] == {"scanOnPush": True}
    assert repo["encryptionConfiguration"] == {"encryptionType": "AES256"}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.create_repository(repositoryName=name)
    assert code(e) == "RepositoryAlreadyExistsException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.create_repository(repositoryName="Upper/Case")
    assert code(e) == "InvalidParameterException"
    [d] = ecr.describe_repositories(repositoryNames=[name])["repositories"]
    assert d["repositoryName"] == name
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.describe_repositories(repositoryNames=["nope-" + uid()])
    assert code(e) == "RepositoryNotFoundException"

    policy = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "pull", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
         "Action": ["ecr:BatchGetImage"]}]})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.get_repository_policy(repositoryName=name)
    assert code(e) == "RepositoryPolicyNotFoundException"
    ecr.set_repository_policy(repositoryName=name, policyText=policy)
    assert json.loads(ecr.get_repository_policy(repositoryName=name)["policyText"]) == json.loads(policy)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.set_repository_policy(repositoryName=name, policyText="not json")
    assert code(e) == "InvalidParameterException"
    ecr.delete_repository_policy(repositoryName=name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.delete_repository_policy(repositoryName=name)
    assert code(e) == "RepositoryPolicyNotFoundException"

    ecr.put_lifecycle_policy(repositoryName=name, lifecyclePolicyText=LIFECYCLE)
    assert json.loads(ecr.get_lifecycle_policy(repositoryName=name)["lifecyclePolicyText"]) == json.loads(LIFECYCLE)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.put_lifecycle_policy(repositoryName=name, lifecyclePolicyText=json.dumps(
            {"rules": [{"rulePriority": 1, "description": "no selection and no action: refused by validation"}]}))
    assert code(e) == "InvalidParameterException"
    ecr.delete_lifecycle_policy(repositoryName=name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.get_lifecycle_policy(repositoryName=name)
    assert code(e) == "LifecyclePolicyNotFoundException"

    arn = repo["repositoryArn"]
    ecr.tag_resource(resourceArn=arn, tags=[{"Key": "env", "Value": "dev"}])
    assert sorted((t["Key"], t["Value"]) for t in ecr.list_tags_for_resource(resourceArn=arn)["tags"]) == [("env", "dev"), ("k", "v")]
    ecr.untag_resource(resourceArn=arn, tagKeys=["k"])
    assert ecr.list_tags_for_resource(resourceArn=arn)["tags"] == [{"Key": "env", "Value": "dev"}]

    ecr.put_image_tag_mutability(repositoryName=name, imageTagMutability="MUTABLE")
    ecr.put_image_scanning_configuration(repositoryName=name, imageScanningConfiguration={"scanOnPush": False})
    [d] = ecr.describe_repositories(repositoryNames=[name])["repositories"]
    assert d["imageTagMutability"] == "MUTABLE" and d["imageScanningConfiguration"] == {"scanOnPush": False}
    ecr.delete_repository(repositoryName=name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.delete_repository(repositoryName=name)
    assert code(e) == "RepositoryNotFoundException"


def test_images(ecr):
    name = f"img-{uid()}"
    ecr.create_repository(repositoryName=name)
    m1, m2 = manifest(1), manifest(2)
    d1 = "sha256:" + hashlib.sha256(m1.encode()).hexdigest()
    d2 = "sha256:" + hashlib.sha256(m2.encode()).hexdigest()
    img = ecr.put_image(repositoryName=name, imageManifest=m1, imageTag="v1")["image"]
    assert img["imageId"] == {"imageDigest": d1, "imageTag": "v1"}
    assert img["imageManifest"] == m1
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.put_image(repositoryName=name, imageManifest=m1, imageTag="v1")
    assert code(e) == "ImageAlreadyExistsException"
    ecr.put_image(repositoryName=name, imageManifest=m1, imageTag="latest")
    ecr.put_image(repositoryName=name, imageManifest=m2, imageTag="v2")
    ecr.put_image(repositoryName=name, imageManifest=m2, imageTag="latest")  # mutable: the tag moves
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.put_image(repositoryName=name, imageManifest=manifest(3), imageDigest="sha256:" + "f" * 64)
    assert code(e) == "ImageDigestDoesNotMatchException"

    details = {d["imageDigest"]: d for d in ecr.describe_images(repositoryName=name)["imageDetails"]}
    assert sorted(details[d1]["imageTags"]) == ["v1"]
    assert sorted(details[d2]["imageTags"]) == ["latest", "v2"]
    assert details[d1]["imageSizeInBytes"] == 1101
    assert details[d1]["artifactMediaType"] == "application/vnd.docker.container.image.v1+json"
    ids = ecr.list_images(repositoryName=name)["imageIds"]
    assert sorted((i["imageDigest"], i["imageTag"]) for i in ids) == sorted([(d1, "v1"), (d2, "v2"), (d2, "latest")])

    got = ecr.batch_get_image(repositoryName=name, imageIds=[{"imageTag": "latest"}, {"imageTag": "nope"}])
    assert [i["imageManifest"] for i in got["images"]] == [m2]
    assert got["failures"][0]["failureCode"] == "ImageNotFound"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.describe_images(repositoryName=name, imageIds=[{"imageTag": "nope"}])
    assert code(e) == "ImageNotFoundException"

    # deleting a tag keeps an image that still has another; the last tag takes the image with it
    out = ecr.batch_delete_image(repositoryName=name, imageIds=[{"imageTag": "latest"}, {"imageTag": "v1"}])
    assert len(out["imageIds"]) == 2 and out["failures"] == []
    assert [d["imageDigest"] for d in ecr.describe_images(repositoryName=name)["imageDetails"]] == [d2]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.delete_repository(repositoryName=name)
    assert code(e) == "RepositoryNotEmptyException"
    ecr.delete_repository(repositoryName=name, force=True)


def test_lifecycle_policy_expires_images_on_push(ecr):
    name = f"lc-{uid()}"
    ecr.create_repository(repositoryName=name)
    keep_two = json.dumps({"rules": [{"rulePriority": 1, "description": "keep the two newest release images",
                                      "selection": {"tagStatus": "tagged", "tagPrefixList": ["release-"],
                                                    "countType": "imageCountMoreThan", "countNumber": 2},
                                      "action": {"type": "expire"}}]})
    ecr.put_lifecycle_policy(repositoryName=name, lifecyclePolicyText=keep_two)
    for n in range(4):
        ecr.put_image(repositoryName=name, imageManifest=manifest(n), imageTag=f"release-{n}")
    ecr.put_image(repositoryName=name, imageManifest=manifest(9), imageTag="dev")
    tags = sorted(i["imageTag"] for i in ecr.list_images(repositoryName=name)["imageIds"])
    assert tags == ["dev", "release-2", "release-3"]


def test_immutable_tags_are_not_overwritten(ecr):
    name = f"imm-{uid()}"
    ecr.create_repository(repositoryName=name, imageTagMutability="IMMUTABLE")
    ecr.put_image(repositoryName=name, imageManifest=manifest(1), imageTag="v1")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.put_image(repositoryName=name, imageManifest=manifest(2), imageTag="v1")
    assert code(e) == "ImageTagAlreadyExistsException"


def test_authorization_token_and_layer_refusal(ecr):
    [auth] = ecr.get_authorization_token()["authorizationData"]
    user, _, password = base64.b64decode(auth["authorizationToken"]).decode().partition(":")
    assert user == "AWS" and password
    assert auth["proxyEndpoint"] == f"https://{ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com"
    name = f"layers-{uid()}"
    ecr.create_repository(repositoryName=name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.initiate_layer_upload(repositoryName=name)
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    assert "layers is not emulated" in e.value.response["Error"]["Message"]


def test_repositories_survive_restart(fresh_server):
    server = fresh_server.start()
    ecr = server.client("ecr")
    ecr.create_repository(repositoryName="keep")
    ecr.put_image(repositoryName="keep", imageManifest=manifest(1), imageTag="v1")
    server.kill9()
    server = CumuloServer(data_dir=fresh_server.data_dir).start()
    try:
        ids = server.client("ecr").list_images(repositoryName="keep")["imageIds"]
        assert [i["imageTag"] for i in ids] == ["v1"]
    finally:
        server.stop()


def repo_template(mutability="IMMUTABLE", lifecycle=True, name=None, policy=False):
    props = {"ImageTagMutability": mutability, "ImageScanningConfiguration": {"ScanOnPush": True},
             "EmptyOnDelete": True, "Tags": [{"Key": "app", "Value": "x"}]}
    if name:
        props["RepositoryName"] = name
    if lifecycle:
        props["LifecyclePolicy"] = {"LifecyclePolicyText": LIFECYCLE}
    if policy:
        props["RepositoryPolicyText"] = {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": ["ecr:BatchGetImage"]}]}
    return json.dumps({"Resources": {"Repo": {"Type": "AWS::ECR::Repository", "Properties": props}},
                       "Outputs": {"Ref": {"Value": {"Ref": "Repo"}},
                                   "Arn": {"Value": {"Fn::GetAtt": ["Repo", "Arn"]}},
                                   "Uri": {"Value": {"Fn::GetAtt": ["Repo", "RepositoryUri"]}}}})


def outputs(cfn, stack):
    s = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in s.get("Outputs", [])}


def test_repository_in_a_stack(cfn, ecr):
    stack = f"ecr-{uid()}"
    cfn.create_stack(StackName=stack, TemplateBody=repo_template())
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    out = outputs(cfn, stack)
    name = out["Ref"]
    assert name == name.lower() and name.startswith(f"{stack}-repo-")
    assert out["Arn"] == f"arn:aws:ecr:us-east-1:{ACCOUNT}:repository/{name}"
    assert out["Uri"] == f"{ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/{name}"
    [d] = ecr.describe_repositories(repositoryNames=[name])["repositories"]
    assert d["imageTagMutability"] == "IMMUTABLE"
    assert json.loads(ecr.get_lifecycle_policy(repositoryName=name)["lifecyclePolicyText"]) == json.loads(LIFECYCLE)

    # in place: mutability, lifecycle removed, policy added
    cfn.update_stack(StackName=stack, TemplateBody=repo_template(mutability="MUTABLE", lifecycle=False, policy=True))
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
    assert outputs(cfn, stack)["Ref"] == name
    [d] = ecr.describe_repositories(repositoryNames=[name])["repositories"]
    assert d["imageTagMutability"] == "MUTABLE"
    with pytest.raises(botocore.exceptions.ClientError):
        ecr.get_lifecycle_policy(repositoryName=name)
    assert json.loads(ecr.get_repository_policy(repositoryName=name)["policyText"])["Statement"][0]["Effect"] == "Allow"
    ecr.put_image(repositoryName=name, imageManifest=manifest(9), imageTag="v1")

    # replacement: a name
    new_name = f"{stack}-named"
    cfn.update_stack(StackName=stack, TemplateBody=repo_template(name=new_name))
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
    assert outputs(cfn, stack)["Ref"] == new_name
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecr.describe_repositories(repositoryNames=[name])  # EmptyOnDelete removed it with its image
    assert code(e) == "RepositoryNotFoundException"

    stack_id = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    with pytest.raises(botocore.exceptions.ClientError):
        ecr.describe_repositories(repositoryNames=[new_name])


CDK_BOOTSTRAP_REPO = """
Parameters:
  Qualifier: {Type: String, Default: hnb659fds}
Conditions:
  HasTrustedAccountsForLookup: {"Fn::Equals": ["a", "b"]}
Resources:
  ContainerAssetsRepository:
    Type: AWS::ECR::Repository
    Properties:
      ImageTagMutability: IMMUTABLE
      LifecyclePolicy:
        LifecyclePolicyText: |
          {
            "rules": [
              {
                "rulePriority": 1,
                "description": "Untagged images should not exist, but expire any older than one year",
                "selection": {
                  "tagStatus": "untagged",
                  "countType": "sinceImagePushed",
                  "countUnit": "days",
                  "countNumber": 365
                },
                "action": { "type": "expire" }
              }
            ]
          }
      RepositoryName:
        Fn::Sub: cdk-${Qualifier}-container-assets-${AWS::AccountId}-${AWS::Region}
      RepositoryPolicyText:
        Fn::If:
          - HasTrustedAccountsForLookup
          - Statement: []
          - Statement:
              - Sid: LambdaECRImageRetrievalPolicy
                Effect: Allow
                Principal: {Service: lambda.amazonaws.com}
                Action: [ecr:BatchGetImage, ecr:GetDownloadUrlForLayer]
                Condition:
                  StringLike:
                    "aws:sourceArn": {"Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:*"}
Outputs:
  ImageRepositoryName:
    Value: {Ref: ContainerAssetsRepository}
"""


def test_cdk_bootstrap_container_assets_repository(cfn, ecr):
    stack = f"cdkboot-{uid()}"
    qualifier = uid()[:9]
    cfn.create_stack(StackName=stack, TemplateBody=CDK_BOOTSTRAP_REPO,
                     Parameters=[{"ParameterKey": "Qualifier", "ParameterValue": qualifier}])
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    name = outputs(cfn, stack)["ImageRepositoryName"]
    assert name == f"cdk-{qualifier}-container-assets-{ACCOUNT}-us-east-1"
    [d] = ecr.describe_repositories(repositoryNames=[name])["repositories"]
    assert d["imageTagMutability"] == "IMMUTABLE"
    stmt = json.loads(ecr.get_repository_policy(repositoryName=name)["policyText"])["Statement"][0]
    assert stmt["Sid"] == "LambdaECRImageRetrievalPolicy"
    stack_id = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    with pytest.raises(botocore.exceptions.ClientError):
        ecr.describe_repositories(repositoryNames=[name])
