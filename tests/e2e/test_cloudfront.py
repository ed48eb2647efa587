"""CloudFront through boto3 and the AWS CLI: distributions (InProgress -> Deployed, domain
names, ETag/If-Match, disable before delete), invalidations, origin access controls and
identities, AWS's managed policies under their real ids beside custom ones, functions with
their stages, tags, errors in AWS's words, restart survival, and a CloudFormation stack with
every CloudFront type Copilot uses deployed, updated and deleted with the CLI."""

import re
import uuid

import botocore.exceptions
import pytest

FAST = {"Delay": 1, "MaxAttempts": 20}
CACHING_OPTIMIZED = "658327ea-f89d-4fab-a63d-7e88639e58f6"
CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
ALL_VIEWER = "216adef6-5c7f-47e4-b989-5492eafa07d3"
SECURITY_HEADERS = "67f7725c-6f97-4210-82d7-5512b31e9d03"


def ref():
    return uuid.uuid4().hex


def raises(code, fn, *args, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        fn(*args, **kw)
    assert e.value.response["Error"]["Code"] == code, e.value.response["Error"]
    return e.value.response


@pytest.fixture(scope="module")
def cf(cumulo):
    return cumulo.client("cloudfront")


def config(**over):
    c = {
        "CallerReference": ref(),
        "Comment": "test",
        "Enabled": True,
        "Origins": {"Quantity": 1, "Items": [{
            "Id": "web", "DomainName": "origin.example.com",
            "CustomOriginConfig": {"HTTPPort": 80, "HTTPSPort": 443, "OriginProtocolPolicy": "https-only"}}]},
        "DefaultCacheBehavior": {"TargetOriginId": "web", "ViewerProtocolPolicy": "redirect-to-https",
                                 "CachePolicyId": CACHING_OPTIMIZED},
    }
    c.update(over)
    return c


def disable_and_delete(cf, did):
    g = cf.get_distribution_config(Id=did)
    c = g["DistributionConfig"]
    c["Enabled"] = False
    etag = cf.update_distribution(Id=did, DistributionConfig=c, IfMatch=g["ETag"])["ETag"]
    cf.get_waiter("distribution_deployed").wait(Id=did, WaiterConfig=FAST)
    cf.delete_distribution(Id=did, IfMatch=etag)


def test_distribution_lifecycle(cf):
    d = cf.create_distribution(DistributionConfig=config())
    assert d["ResponseMetadata"]["HTTPStatusCode"] == 201
    dist = d["Distribution"]
    did = dist["Id"]
    assert re.fullmatch(r"E[A-Z0-9]{13}", did)
    assert re.fullmatch(r"d[a-z0-9]{13,14}\.cloudfront\.net", dist["DomainName"])
    assert dist["Status"] == "InProgress"
    assert dist["ARN"] == f"arn:aws:cloudfront::000000000000:distribution/{did}"
    assert d["Location"].endswith(f"/2020-05-31/distribution/{did}") and d["ETag"]
    # AWS's defaults are filled in.
    c = dist["DistributionConfig"]
    assert c["ViewerCertificate"]["CloudFrontDefaultCertificate"] is True
    assert c["DefaultCacheBehavior"]["AllowedMethods"]["Items"] == ["HEAD", "GET"]
    assert c["PriceClass"] == "PriceClass_All" and c["HttpVersion"] == "http2"

    cf.get_waiter("distribution_deployed").wait(Id=did, WaiterConfig=FAST)
    assert cf.get_distribution(Id=did)["Distribution"]["Status"] == "Deployed"
    got = cf.get_distribution_config(Id=did)
    etag, c = got["ETag"], got["DistributionConfig"]
    c["Comment"] = "changed"
    r = raises("PreconditionFailed", cf.update_distribution, Id=did, DistributionConfig=c, IfMatch="EWRONG")
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 412
    raises("InvalidIfMatchVersion", cf.update_distribution, Id=did, DistributionConfig=c, IfMatch="")
    up = cf.update_distribution(Id=did, DistributionConfig=c, IfMatch=etag)
    assert up["Distribution"]["Status"] == "InProgress" and up["ETag"] != etag
    assert up["Distribution"]["DistributionConfig"]["Comment"] == "changed"

    r = raises("DistributionNotDisabled", cf.delete_distribution, Id=did, IfMatch=up["ETag"])
    assert r["Error"]["Message"] == "The distribution you are trying to delete has not been disabled."
    listed = [x["Id"] for x in cf.list_distributions()["DistributionList"].get("Items", [])]
    assert did in listed
    disable_and_delete(cf, did)
    r = raises("NoSuchDistribution", cf.get_distribution, Id=did)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_caller_reference_is_idempotent(cf):
    c = config()
    first = cf.create_distribution(DistributionConfig=c)["Distribution"]["Id"]
    assert cf.create_distribution(DistributionConfig=c)["Distribution"]["Id"] == first
    raises("DistributionAlreadyExists", cf.create_distribution, DistributionConfig=dict(c, Comment="other"))
    cf.get_distribution(Id=first)
    disable_and_delete(cf, first)


def test_bad_configs_are_refused_and_change_nothing(cf):
    before = cf.list_distributions()["DistributionList"]["Quantity"]
    bad_policy = config(DefaultCacheBehavior={"TargetOriginId": "web", "ViewerProtocolPolicy": "allow-all",
                                              "CachePolicyId": "00000000-0000-0000-0000-000000000000"})
    r = raises("NoSuchCachePolicy", cf.create_distribution, DistributionConfig=bad_policy)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 404
    raises("NoSuchOrigin", cf.create_distribution, DistributionConfig=config(DefaultCacheBehavior={
        "TargetOriginId": "nope", "ViewerProtocolPolicy": "allow-all", "CachePolicyId": CACHING_OPTIMIZED}))
    raises("InvalidArgument", cf.create_distribution, DistributionConfig=config(DefaultCacheBehavior={
        "TargetOriginId": "web", "ViewerProtocolPolicy": "allow-all"}))
    raises("InconsistentQuantities", cf.create_distribution,
           DistributionConfig=config(Aliases={"Quantity": 2, "Items": ["a.example.com"]}))
    raises("InvalidViewerCertificate", cf.create_distribution,
           DistributionConfig=config(Aliases={"Quantity": 1, "Items": ["a.example.com"]}))
    raises("InvalidViewerCertificate", cf.create_distribution, DistributionConfig=config(
        Aliases={"Quantity": 1, "Items": ["a.example.com"]},
        ViewerCertificate={"ACMCertificateArn": "arn:aws:acm:us-east-1:000000000000:certificate/none",
                           "SSLSupportMethod": "sni-only"}))
    assert cf.list_distributions()["DistributionList"]["Quantity"] == before


def test_managed_and_custom_policies(cf):
    managed = cf.list_cache_policies(Type="managed")["CachePolicyList"]["Items"]
    ids = {p["CachePolicy"]["Id"]: p["CachePolicy"]["CachePolicyConfig"]["Name"] for p in managed}
    assert ids[CACHING_OPTIMIZED] == "Managed-CachingOptimized"
    assert ids[CACHING_DISABLED] == "Managed-CachingDisabled"
    opt = cf.get_cache_policy(Id=CACHING_OPTIMIZED)["CachePolicy"]["CachePolicyConfig"]
    assert (opt["MinTTL"], opt["DefaultTTL"], opt["MaxTTL"]) == (1, 86400, 31536000)
    orp = cf.get_origin_request_policy(Id=ALL_VIEWER)["OriginRequestPolicy"]["OriginRequestPolicyConfig"]
    assert orp["HeadersConfig"]["HeaderBehavior"] == "allViewer"
    assert cf.get_response_headers_policy(Id=SECURITY_HEADERS)["ResponseHeadersPolicy"][
        "ResponseHeadersPolicyConfig"]["Name"] == "Managed-SecurityHeadersPolicy"
    raises("IllegalUpdate", cf.update_cache_policy, Id=CACHING_OPTIMIZED, IfMatch="E1",
           CachePolicyConfig={"Name": "x", "MinTTL": 0})

    name = f"custom-{ref()[:8]}"
    pc = {"Name": name, "MinTTL": 0, "DefaultTTL": 60, "MaxTTL": 600,
          "ParametersInCacheKeyAndForwardedToOrigin": {
              "EnableAcceptEncodingGzip": True,
              "HeadersConfig": {"HeaderBehavior": "whitelist", "Headers": {"Quantity": 1, "Items": ["Host"]}},
              "CookiesConfig": {"CookieBehavior": "none"},
              "QueryStringsConfig": {"QueryStringBehavior": "all"}}}
    p = cf.create_cache_policy(CachePolicyConfig=pc)
    pid = p["CachePolicy"]["Id"]
    raises("CachePolicyAlreadyExists", cf.create_cache_policy, CachePolicyConfig=pc)
    raises("InvalidTTLOrder", cf.create_cache_policy, CachePolicyConfig=dict(pc, Name=name + "b", MinTTL=700))
    custom = cf.list_cache_policies(Type="custom")["CachePolicyList"]["Items"]
    assert [x["CachePolicy"]["Id"] for x in custom if x["CachePolicy"]["CachePolicyConfig"]["Name"] == name] == [pid]

    d = cf.create_distribution(DistributionConfig=config(DefaultCacheBehavior={
        "TargetOriginId": "web", "ViewerProtocolPolicy": "allow-all", "CachePolicyId": pid}))
    raises("CachePolicyInUse", cf.delete_cache_policy, Id=pid, IfMatch=p["ETag"])
    cf.get_distribution(Id=d["Distribution"]["Id"])
    disable_and_delete(cf, d["Distribution"]["Id"])
    up = cf.update_cache_policy(Id=pid, IfMatch=p["ETag"], CachePolicyConfig=dict(pc, Comment="now"))
    raises("PreconditionFailed", cf.delete_cache_policy, Id=pid, IfMatch=p["ETag"])
    cf.delete_cache_policy(Id=pid, IfMatch=up["ETag"])
    raises("NoSuchCachePolicy", cf.get_cache_policy, Id=pid)


def test_origin_access_controls_and_identities(cf):
    oac_cfg = {"Name": f"oac-{ref()[:8]}", "Description": "s3", "SigningProtocol": "sigv4",
               "SigningBehavior": "always", "OriginAccessControlOriginType": "s3"}
    oac = cf.create_origin_access_control(OriginAccessControlConfig=oac_cfg)
    oid = oac["OriginAccessControl"]["Id"]
    raises("OriginAccessControlAlreadyExists", cf.create_origin_access_control, OriginAccessControlConfig=oac_cfg)
    raises("InvalidArgument", cf.create_origin_access_control,
           OriginAccessControlConfig=dict(oac_cfg, Name="other", SigningProtocol="sigv2"))
    oai = cf.create_cloud_front_origin_access_identity(
        CloudFrontOriginAccessIdentityConfig={"CallerReference": ref(), "Comment": "legacy"})
    iid = oai["CloudFrontOriginAccessIdentity"]["Id"]
    assert re.fullmatch(r"[0-9a-f]{64}", oai["CloudFrontOriginAccessIdentity"]["S3CanonicalUserId"])

    origins = {"Quantity": 2, "Items": [
        {"Id": "a", "DomainName": "a.s3.amazonaws.com", "OriginAccessControlId": oid,
         "S3OriginConfig": {"OriginAccessIdentity": ""}},
        {"Id": "b", "DomainName": "b.s3.amazonaws.com",
         "S3OriginConfig": {"OriginAccessIdentity": f"origin-access-identity/cloudfront/{iid}"}}]}
    d = cf.create_distribution(DistributionConfig=config(Origins=origins, DefaultCacheBehavior={
        "TargetOriginId": "a", "ViewerProtocolPolicy": "allow-all", "CachePolicyId": CACHING_OPTIMIZED}))
    raises("OriginAccessControlInUse", cf.delete_origin_access_control, Id=oid, IfMatch=oac["ETag"])
    raises("CloudFrontOriginAccessIdentityInUse", cf.delete_cloud_front_origin_access_identity,
           Id=iid, IfMatch=oai["ETag"])
    cf.get_distribution(Id=d["Distribution"]["Id"])
    disable_and_delete(cf, d["Distribution"]["Id"])
    cf.delete_origin_access_control(Id=oid, IfMatch=oac["ETag"])
    cf.delete_cloud_front_origin_access_identity(Id=iid, IfMatch=oai["ETag"])
    raises("NoSuchOriginAccessControl", cf.get_origin_access_control, Id=oid)
    raises("NoSuchOriginAccessControl", cf.create_distribution, DistributionConfig=config(Origins=origins))


def test_functions_and_their_stages(cf):
    name = f"fn-{ref()[:8]}"
    code = b"function handler(event) { return event.request; }"
    f = cf.create_function(Name=name, FunctionConfig={"Comment": "rewrite", "Runtime": "cloudfront-js-2.0"},
                           FunctionCode=code)
    assert f["FunctionSummary"]["Status"] == "UNPUBLISHED"
    arn = f["FunctionSummary"]["FunctionMetadata"]["FunctionARN"]
    assert arn == f"arn:aws:cloudfront::000000000000:function/{name}"
    raises("FunctionAlreadyExists", cf.create_function, Name=name,
           FunctionConfig={"Comment": "", "Runtime": "cloudfront-js-2.0"}, FunctionCode=code)
    raises("NoSuchFunctionExists", cf.describe_function, Name=name, Stage="LIVE")
    assert cf.get_function(Name=name)["FunctionCode"].read() == code
    # Not yet published: no distribution may use it.
    assoc = {"Quantity": 1, "Items": [{"EventType": "viewer-request", "FunctionARN": arn}]}
    behavior = {"TargetOriginId": "web", "ViewerProtocolPolicy": "allow-all", "CachePolicyId": CACHING_OPTIMIZED,
                "FunctionAssociations": assoc}
    raises("InvalidFunctionAssociation", cf.create_distribution, DistributionConfig=config(DefaultCacheBehavior=behavior))
    raises("PreconditionFailed", cf.publish_function, Name=name, IfMatch="EWRONG")
    live = cf.publish_function(Name=name, IfMatch=f["ETag"])["FunctionSummary"]
    assert live["FunctionMetadata"]["Stage"] == "LIVE" and live["Status"] == "UNASSOCIATED"
    assert cf.get_function(Name=name, Stage="LIVE")["FunctionCode"].read() == code

    up = cf.update_function(Name=name, IfMatch=f["ETag"], FunctionConfig={"Comment": "v2", "Runtime": "cloudfront-js-2.0"},
                            FunctionCode=b"function handler(e) { return e.request; }")
    assert cf.describe_function(Name=name)["FunctionSummary"]["FunctionConfig"]["Comment"] == "v2"
    assert cf.describe_function(Name=name, Stage="LIVE")["FunctionSummary"]["FunctionConfig"]["Comment"] == "rewrite"
    names = [x["Name"] for x in cf.list_functions(Stage="LIVE")["FunctionList"].get("Items", [])]
    assert name in names

    d = cf.create_distribution(DistributionConfig=config(DefaultCacheBehavior=behavior))
    assert cf.describe_function(Name=name, Stage="LIVE")["FunctionSummary"]["Status"] == "DEPLOYED"
    raises("FunctionInUse", cf.delete_function, Name=name, IfMatch=up["ETag"])
    cf.get_distribution(Id=d["Distribution"]["Id"])
    disable_and_delete(cf, d["Distribution"]["Id"])
    cf.delete_function(Name=name, IfMatch=up["ETag"])
    raises("NoSuchFunctionExists", cf.describe_function, Name=name)


def test_invalidations_and_tags(cf):
    d = cf.create_distribution_with_tags(DistributionConfigWithTags={
        "DistributionConfig": config(), "Tags": {"Items": [{"Key": "team", "Value": "web"}]}})["Distribution"]
    did, arn = d["Id"], d["ARN"]
    inv = cf.create_invalidation(DistributionId=did, InvalidationBatch={
        "Paths": {"Quantity": 2, "Items": ["/index.html", "/static/*"]}, "CallerReference": "deploy-1"})
    assert inv["Invalidation"]["Status"] == "Completed" and re.fullmatch(r"I[A-Z0-9]{13}", inv["Invalidation"]["Id"])
    again = cf.create_invalidation(DistributionId=did, InvalidationBatch={
        "Paths": {"Quantity": 2, "Items": ["/index.html", "/static/*"]}, "CallerReference": "deploy-1"})
    assert again["Invalidation"]["Id"] == inv["Invalidation"]["Id"]
    cf.get_waiter("invalidation_completed").wait(DistributionId=did, Id=inv["Invalidation"]["Id"], WaiterConfig=FAST)
    assert cf.list_invalidations(DistributionId=did)["InvalidationList"]["Quantity"] == 1
    raises("InvalidArgument", cf.create_invalidation, DistributionId=did, InvalidationBatch={
        "Paths": {"Quantity": 1, "Items": ["no-slash"]}, "CallerReference": "bad"})
    raises("NoSuchInvalidation", cf.get_invalidation, DistributionId=did, Id="INOPE")

    assert cf.list_tags_for_resource(Resource=arn)["Tags"]["Items"] == [{"Key": "team", "Value": "web"}]
    cf.tag_resource(Resource=arn, Tags={"Items": [{"Key": "env", "Value": "test"}]})
    cf.untag_resource(Resource=arn, TagKeys={"Items": ["team"]})
    assert cf.list_tags_for_resource(Resource=arn)["Tags"]["Items"] == [{"Key": "env", "Value": "test"}]
    raises("NoSuchResource", cf.list_tags_for_resource, Resource="arn:aws:cloudfront::000000000000:distribution/ENOPE")
    cf.get_distribution(Id=did)
    disable_and_delete(cf, did)


def test_state_survives_restart(fresh_server):
    fresh_server.start()
    cf = fresh_server.client("cloudfront")
    d = cf.create_distribution(DistributionConfig=config())
    f = cf.create_function(Name="kept", FunctionConfig={"Comment": "", "Runtime": "cloudfront-js-1.0"},
                           FunctionCode=b"function handler(e){return e}")
    cf.publish_function(Name="kept", IfMatch=f["ETag"])
    fresh_server.kill9()
    fresh_server.start()
    cf = fresh_server.client("cloudfront")
    got = cf.get_distribution(Id=d["Distribution"]["Id"])
    assert got["Distribution"]["DomainName"] == d["Distribution"]["DomainName"]
    assert got["ETag"] == d["ETag"]
    assert cf.describe_function(Name="kept", Stage="LIVE")["FunctionSummary"]["Name"] == "kept"


STACK_TEMPLATE = """
Parameters:
  Comment:
    Type: String
    Default: first
Resources:
  CloudFrontOriginAccessControl:
    Type: AWS::CloudFront::OriginAccessControl
    Properties:
      OriginAccessControlConfig:
        Description: Access control for static s3 origin
        Name: !Sub "${AWS::StackName}-oac"
        OriginAccessControlOriginType: s3
        SigningBehavior: always
        SigningProtocol: sigv4
  Identity:
    Type: AWS::CloudFront::CloudFrontOriginAccessIdentity
    Properties:
      CloudFrontOriginAccessIdentityConfig:
        Comment: !Ref Comment
  Cache:
    Type: AWS::CloudFront::CachePolicy
    Properties:
      CachePolicyConfig:
        Name: !Sub "${AWS::StackName}-cache"
        MinTTL: 0
        DefaultTTL: 60
        MaxTTL: 300
        ParametersInCacheKeyAndForwardedToOrigin:
          EnableAcceptEncodingGzip: true
          HeadersConfig:
            HeaderBehavior: none
          CookiesConfig:
            CookieBehavior: none
          QueryStringsConfig:
            QueryStringBehavior: whitelist
            QueryStrings: [v]
  OriginRequest:
    Type: AWS::CloudFront::OriginRequestPolicy
    Properties:
      OriginRequestPolicyConfig:
        Name: !Sub "${AWS::StackName}-origin"
        HeadersConfig:
          HeaderBehavior: whitelist
          Headers: [Accept]
        CookiesConfig:
          CookieBehavior: all
        QueryStringsConfig:
          QueryStringBehavior: none
  ResponseHeaders:
    Type: AWS::CloudFront::ResponseHeadersPolicy
    Properties:
      ResponseHeadersPolicyConfig:
        Name: !Sub "${AWS::StackName}-headers"
        CorsConfig:
          AccessControlAllowCredentials: false
          AccessControlAllowHeaders:
            Items: ["*"]
          AccessControlAllowMethods:
            Items: [GET, HEAD]
          AccessControlAllowOrigins:
            Items: ["*"]
          OriginOverride: true
  CloudFrontViewerRequestRewriteFunction:
    Type: AWS::CloudFront::Function
    Properties:
      AutoPublish: true
      FunctionCode: !Sub "function handler(event){/* ${Comment} */return event.request}"
      FunctionConfig:
        Comment: CloudFront Function to rewrite viewer request to index.html
        Runtime: cloudfront-js-1.0
      Name: !Sub "${AWS::StackName}-static"
  CloudFrontDistribution:
    Type: AWS::CloudFront::Distribution
    Properties:
      DistributionConfig:
        Comment: !Ref Comment
        Enabled: true
        IPV6Enabled: true
        DefaultRootObject: index.html
        Origins:
          - Id: origin
            DomainName: lb.example.com
            CustomOriginConfig:
              OriginProtocolPolicy: match-viewer
          - Id: s3
            DomainName: bucket.s3.us-west-2.amazonaws.com
            OriginAccessControlId: !Ref CloudFrontOriginAccessControl
            S3OriginConfig:
              OriginAccessIdentity: ""
        DefaultCacheBehavior:
          AllowedMethods: [GET, HEAD, OPTIONS, PUT, PATCH, POST, DELETE]
          CachePolicyId: 4135ea2d-6df8-44a3-9df3-4b5a84be39ad
          OriginRequestPolicyId: 216adef6-5c7f-47e4-b989-5492eafa07d3
          TargetOriginId: origin
          ViewerProtocolPolicy: allow-all
        CacheBehaviors:
          - PathPattern: static/*
            AllowedMethods: [GET, HEAD]
            CachePolicyId: !Ref Cache
            OriginRequestPolicyId: !Ref OriginRequest
            ResponseHeadersPolicyId: !Ref ResponseHeaders
            TargetOriginId: s3
            ViewerProtocolPolicy: redirect-to-https
            Compress: true
            FunctionAssociations:
              - EventType: viewer-request
                FunctionARN: !GetAtt CloudFrontViewerRequestRewriteFunction.FunctionARN
      Tags:
        - Key: app
          Value: !Ref Comment
Outputs:
  DistributionId:
    Value: !Ref CloudFrontDistribution
  DomainName:
    Value: !GetAtt CloudFrontDistribution.DomainName
  OacId:
    Value: !GetAtt CloudFrontOriginAccessControl.Id
  IdentityId:
    Value: !Ref Identity
  CanonicalUser:
    Value: !GetAtt Identity.S3CanonicalUserId
  CacheId:
    Value: !GetAtt Cache.Id
  CacheModified:
    Value: !GetAtt Cache.LastModifiedTime
  OriginRequestId:
    Value: !Ref OriginRequest
  HeadersId:
    Value: !Ref ResponseHeaders
  FunctionArn:
    Value: !Ref CloudFrontViewerRequestRewriteFunction
  FunctionMetadataArn:
    Value: !GetAtt CloudFrontViewerRequestRewriteFunction.FunctionMetadata.FunctionARN
  FunctionStage:
    Value: !GetAtt CloudFrontViewerRequestRewriteFunction.Stage
"""


def test_cloudformation_deploy_update_delete(cumulo, cf, tmp_path):
    cfn = cumulo.client("cloudformation")
    stack = f"cf-{uuid.uuid4().hex[:8]}"
    template = tmp_path / "cf.yaml"
    template.write_text(STACK_TEMPLATE)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template))
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    d = cf.get_distribution(Id=out["DistributionId"])["Distribution"]
    assert d["Status"] == "Deployed" and d["DomainName"] == out["DomainName"]
    c = d["DistributionConfig"]
    assert c["Comment"] == "first" and c["IsIPV6Enabled"] is True
    assert c["DefaultCacheBehavior"]["AllowedMethods"]["Quantity"] == 7
    assert c["DefaultCacheBehavior"]["CachePolicyId"] == CACHING_DISABLED
    [static] = c["CacheBehaviors"]["Items"]
    assert static["CachePolicyId"] == out["CacheId"] and static["ResponseHeadersPolicyId"] == out["HeadersId"]
    assert static["FunctionAssociations"]["Items"][0]["FunctionARN"] == out["FunctionArn"]
    assert c["Origins"]["Items"][1]["OriginAccessControlId"] == out["OacId"]
    assert cf.list_tags_for_resource(Resource=d["ARN"])["Tags"]["Items"] == [{"Key": "app", "Value": "first"}]
    oai = cf.get_cloud_front_origin_access_identity(Id=out["IdentityId"])["CloudFrontOriginAccessIdentity"]
    assert oai["S3CanonicalUserId"] == out["CanonicalUser"]
    assert cf.get_cache_policy(Id=out["CacheId"])["CachePolicy"]["CachePolicyConfig"][
        "ParametersInCacheKeyAndForwardedToOrigin"]["QueryStringsConfig"]["QueryStrings"] == {"Quantity": 1, "Items": ["v"]}
    assert cf.get_origin_request_policy(Id=out["OriginRequestId"])["OriginRequestPolicy"]["OriginRequestPolicyConfig"][
        "HeadersConfig"]["Headers"]["Items"] == ["Accept"]
    assert out["FunctionMetadataArn"] == out["FunctionArn"] and out["FunctionStage"] == "LIVE"
    fname = out["FunctionArn"].rsplit("/", 1)[1]
    assert b"first" in cf.get_function(Name=fname, Stage="LIVE")["FunctionCode"].read()
    stack_resources = cfn.describe_stack_resources(StackName=stack)["StackResources"]
    reason = [r for r in stack_resources if r["LogicalResourceId"] == "CloudFrontDistribution"][0]
    assert "no CloudFront edge serves" in reason.get("ResourceStatusReason", "")

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", "Comment=second")
    d = cf.get_distribution(Id=out["DistributionId"])["Distribution"]
    assert d["DistributionConfig"]["Comment"] == "second" and d["Status"] == "Deployed"
    assert cf.list_tags_for_resource(Resource=d["ARN"])["Tags"]["Items"] == [{"Key": "app", "Value": "second"}]
    assert cf.get_cloud_front_origin_access_identity(Id=out["IdentityId"])["CloudFrontOriginAccessIdentity"][
        "CloudFrontOriginAccessIdentityConfig"]["Comment"] == "second"
    assert b"second" in cf.get_function(Name=fname, Stage="LIVE")["FunctionCode"].read()

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    raises("NoSuchDistribution", cf.get_distribution, Id=out["DistributionId"])
    raises("NoSuchOriginAccessControl", cf.get_origin_access_control, Id=out["OacId"])
    raises("NoSuchCloudFrontOriginAccessIdentity", cf.get_cloud_front_origin_access_identity, Id=out["IdentityId"])
    raises("NoSuchCachePolicy", cf.get_cache_policy, Id=out["CacheId"])
    raises("NoSuchOriginRequestPolicy", cf.get_origin_request_policy, Id=out["OriginRequestId"])
    raises("NoSuchResponseHeadersPolicy", cf.get_response_headers_policy, Id=out["HeadersId"])
    raises("NoSuchFunctionExists", cf.describe_function, Name=fname)
