"""ACM through boto3 and the AWS CLI: DNS-validated certificates issued once their CNAME is in a
cumulo public hosted zone (the `certificate_validated` waiter), EMAIL validation, idempotency
tokens, imported PEM certificates (names, dates, issuer, serial read from the PEM; reimport
by ARN), ListCertificates filters and paging, tags, DeleteCertificate refused while in use,
errors in AWS's shape with nothing changed, restart survival, and a certificate stack whose
validation records CloudFormation writes itself."""

import pathlib
import time
import uuid

import botocore.exceptions
import pytest

FAST = {"Delay": 1, "MaxAttempts": 30}
DATA = pathlib.Path(__file__).parent / "data"
CERT = (DATA / "acm-test-cert.pem").read_bytes()
KEY = (DATA / "acm-test-key.pem").read_bytes()


def domain():
    return f"c{uuid.uuid4().hex[:10]}.example.com"


def raises(code, fn, *args, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        fn(*args, **kw)
    err = e.value.response["Error"]
    assert err["Code"] == code, err
    return err


@pytest.fixture(scope="module")
def acm(cumulo):
    return cumulo.client("acm")


@pytest.fixture(scope="module")
def r53(cumulo):
    return cumulo.client("route53")


def public_zone(r53, name):
    return r53.create_hosted_zone(Name=name, CallerReference=uuid.uuid4().hex)["HostedZone"]["Id"]


def write(r53, zid, record):
    r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Changes": [{"Action": "UPSERT", "ResourceRecordSet": {
        "Name": record["Name"], "Type": "CNAME", "TTL": 300, "ResourceRecords": [{"Value": record["Value"]}]}}]})


def test_dns_validation_issues_once_the_cname_is_in_the_zone(acm, r53):
    name = domain()
    zid = public_zone(r53, name)
    arn = acm.request_certificate(DomainName=f"*.{name}", SubjectAlternativeNames=[name],
                                  ValidationMethod="DNS")["CertificateArn"]
    assert arn.startswith("arn:aws:acm:us-east-1:") and ":certificate/" in arn
    cert = acm.describe_certificate(CertificateArn=arn)["Certificate"]
    assert cert["Status"] == "PENDING_VALIDATION" and cert["Type"] == "AMAZON_ISSUED"
    assert cert["SubjectAlternativeNames"] == [f"*.{name}", name]
    assert cert["Subject"] == f"CN=*.{name}" and cert["Issuer"] == "Amazon"
    assert cert["KeyAlgorithm"] == "RSA-2048" and cert["InUseBy"] == [] and cert["KeyUsages"] == []
    assert cert["RenewalEligibility"] == "INELIGIBLE"
    assert cert["Options"]["CertificateTransparencyLoggingPreference"] == "ENABLED"
    dvo = cert["DomainValidationOptions"]
    assert [o["DomainName"] for o in dvo] == [f"*.{name}", name]
    assert all(o["ValidationStatus"] == "PENDING_VALIDATION" and o["ValidationMethod"] == "DNS" for o in dvo)
    rec = dvo[0]["ResourceRecord"]
    # A domain and its wildcard validate with one record.
    assert dvo[1]["ResourceRecord"] == rec and rec["Type"] == "CNAME"
    assert rec["Name"].startswith("_") and rec["Name"].endswith(f".{name}.")
    assert rec["Value"].startswith("_") and rec["Value"].endswith(".acm-validations.aws.")
    waiter = acm.get_waiter("certificate_validated")
    with pytest.raises(botocore.exceptions.WaiterError):
        waiter.wait(CertificateArn=arn, WaiterConfig={"Delay": 1, "MaxAttempts": 2})
    write(r53, zid, rec)
    waiter.wait(CertificateArn=arn, WaiterConfig=FAST)
    cert = acm.describe_certificate(CertificateArn=arn)["Certificate"]
    assert cert["Status"] == "ISSUED" and "IssuedAt" in cert and cert["NotAfter"] > cert["NotBefore"]
    assert [o["ValidationStatus"] for o in cert["DomainValidationOptions"]] == ["SUCCESS", "SUCCESS"]
    assert [u["Name"] for u in cert["ExtendedKeyUsages"]] == ["TLS_WEB_SERVER_AUTHENTICATION",
                                                              "TLS_WEB_CLIENT_AUTHENTICATION"]
    assert cert["Serial"].count(":") == 15


def test_the_longest_covering_public_zone_decides(acm, r53):
    parent = domain()
    child = f"dev.{parent}"
    parent_zone = public_zone(r53, parent)
    public_zone(r53, child)
    arn = acm.request_certificate(DomainName=f"api.{child}", ValidationMethod="DNS")["CertificateArn"]
    rec = acm.describe_certificate(CertificateArn=arn)["Certificate"]["DomainValidationOptions"][0]["ResourceRecord"]
    write(r53, parent_zone, rec)  # the delegated child zone answers for the name, not the parent
    assert acm.describe_certificate(CertificateArn=arn)["Certificate"]["Status"] == "PENDING_VALIDATION"
    child_zone = [z["Id"] for z in r53.list_hosted_zones_by_name(DNSName=child)["HostedZones"]
                  if z["Name"] == child + "."][0]
    write(r53, child_zone, rec)
    assert acm.describe_certificate(CertificateArn=arn)["Certificate"]["Status"] == "ISSUED"


def test_email_validation_idempotency_and_key_algorithms(acm):
    name = domain()
    token = uuid.uuid4().hex[:20]
    a = acm.request_certificate(DomainName=name, ValidationMethod="EMAIL", IdempotencyToken=token)["CertificateArn"]
    b = acm.request_certificate(DomainName=name, ValidationMethod="EMAIL", IdempotencyToken=token)["CertificateArn"]
    assert a == b
    cert = acm.describe_certificate(CertificateArn=a)["Certificate"]
    [o] = cert["DomainValidationOptions"]
    assert o["ValidationMethod"] == "EMAIL" and "ResourceRecord" not in o and o["ValidationEmails"] == []
    acm.resend_validation_email(CertificateArn=a, Domain=name, ValidationDomain=name)
    ec = acm.request_certificate(DomainName=name, KeyAlgorithm="EC_prime256v1")["CertificateArn"]
    assert acm.describe_certificate(CertificateArn=ec)["Certificate"]["KeyAlgorithm"] == "EC-prime256v1"
    # ListCertificates, like AWS, shows only RSA_1024/RSA_2048 keys unless keyTypes says otherwise.
    listed = [c["CertificateArn"] for c in acm.list_certificates()["CertificateSummaryList"]]
    assert a in listed and ec not in listed
    ecs = acm.list_certificates(Includes={"keyTypes": ["EC_prime256v1"]})["CertificateSummaryList"]
    assert ec in [c["CertificateArn"] for c in ecs] and a not in [c["CertificateArn"] for c in ecs]
    raises("ValidationException", acm.request_certificate, DomainName=name, KeyAlgorithm="RSA_4096")


def test_import_reads_the_pem_and_reimports_by_arn(acm):
    arn = acm.import_certificate(Certificate=CERT, PrivateKey=KEY, Tags=[{"Key": "k", "Value": "v"}])["CertificateArn"]
    cert = acm.describe_certificate(CertificateArn=arn)["Certificate"]
    assert cert["Type"] == "IMPORTED" and cert["Status"] == "ISSUED"
    assert cert["DomainName"] == "localhost"
    # Described sorted, as AWS does (aws-recordings/acm); the summary keeps the PEM's order.
    assert cert["SubjectAlternativeNames"] == ["IP:127.0.0.1", "localhost", "test.localhost.example"]
    [summary] = [c for c in acm.list_certificates()["CertificateSummaryList"] if c["CertificateArn"] == arn]
    assert summary["SubjectAlternativeNameSummaries"] == ["localhost", "test.localhost.example", "IP:127.0.0.1"]
    assert cert["Issuer"] == "Cumulo Test" and cert["Serial"] == "03:e9"
    assert cert["Subject"] == "C=AU,ST=Some-State,O=Cumulo Test,CN=localhost"
    assert cert["KeyAlgorithm"] == "RSA-2048" and cert["SignatureAlgorithm"] == "SHA256WITHRSA"
    assert [u["Name"] for u in cert["KeyUsages"]] == ["DIGITAL_SIGNATURE", "KEY_ENCIPHERMENT"]
    assert cert["ExtendedKeyUsages"] == [{"Name": "TLS_WEB_SERVER_AUTHENTICATION", "OID": "1.3.6.1.5.5.7.3.1"}]
    assert "ImportedAt" in cert and cert["NotAfter"] > cert["NotBefore"]
    assert cert["DomainValidationOptions"][1] == {"DomainName": "localhost"}
    got = acm.get_certificate(CertificateArn=arn)
    assert got["Certificate"].strip() == CERT.decode().strip()
    again = acm.import_certificate(CertificateArn=arn, Certificate=CERT, PrivateKey=KEY)["CertificateArn"]
    assert again == arn
    assert acm.list_tags_for_certificate(CertificateArn=arn)["Tags"] == [{"Key": "k", "Value": "v"}]
    err = raises("ValidationException", acm.import_certificate, Certificate=CERT + CERT, PrivateKey=KEY)
    assert "more than one certificate" in err["Message"]
    raises("ValidationException", acm.import_certificate, Certificate=b"not a pem", PrivateKey=KEY)


def test_import_through_the_cli(cumulo, tmp_path):
    (tmp_path / "c.pem").write_bytes(CERT)
    (tmp_path / "k.pem").write_bytes(KEY)
    out = cumulo.aws("acm", "import-certificate", "--certificate", f"fileb://{tmp_path / 'c.pem'}",
                     "--private-key", f"fileb://{tmp_path / 'k.pem'}")
    got = cumulo.aws("acm", "describe-certificate", "--certificate-arn", out["CertificateArn"])
    assert got["Certificate"]["DomainName"] == "localhost"


def test_errors_tags_paging_and_in_use(acm, cumulo):
    missing = "arn:aws:acm:us-east-1:000000000000:certificate/00000000-0000-0000-0000-000000000000"
    err = raises("ResourceNotFoundException", acm.describe_certificate, CertificateArn=missing)
    assert err["Message"] == f"Could not find certificate {missing}."
    raises("InvalidArnException", acm.describe_certificate, CertificateArn="arn:aws:s3:::some-bucket-name")
    raises("ValidationException", acm.request_certificate, DomainName="bad_domain")
    arns = [acm.request_certificate(DomainName=domain())["CertificateArn"] for _ in range(3)]
    acm.add_tags_to_certificate(CertificateArn=arns[0], Tags=[{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}])
    acm.remove_tags_from_certificate(CertificateArn=arns[0], Tags=[{"Key": "a", "Value": "other"}, {"Key": "b"}])
    assert acm.list_tags_for_certificate(CertificateArn=arns[0])["Tags"] == [{"Key": "a", "Value": "1"}]
    raises("InvalidTagException", acm.add_tags_to_certificate, CertificateArn=arns[0],
           Tags=[{"Key": "aws:x", "Value": "1"}])
    raises("RequestInProgressException", acm.get_certificate, CertificateArn=arns[0])
    pages = acm.get_paginator("list_certificates").paginate(CertificateStatuses=["PENDING_VALIDATION"],
                                                            PaginationConfig={"PageSize": 1})
    seen = [c["CertificateArn"] for p in pages for c in p["CertificateSummaryList"]]
    assert set(arns) <= set(seen) and len(seen) == len(set(seen))
    issued = acm.list_certificates(CertificateStatuses=["ISSUED"])["CertificateSummaryList"]
    assert not set(arns) & {c["CertificateArn"] for c in issued}
    # An ELBv2 HTTPS listener puts the certificate in use.
    ec2 = cumulo.client("ec2")
    elb = cumulo.client("elbv2")
    subnets = ec2.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"][:2]
    arn = acm.import_certificate(Certificate=CERT, PrivateKey=KEY)["CertificateArn"]
    lb = elb.create_load_balancer(Name=f"lb-{uuid.uuid4().hex[:8]}", Subnets=[s["SubnetId"] for s in subnets])[
        "LoadBalancers"][0]["LoadBalancerArn"]
    tg = elb.create_target_group(Name=f"tg-{uuid.uuid4().hex[:8]}", Protocol="HTTP", Port=80,
                                 VpcId=subnets[0]["VpcId"])["TargetGroups"][0]["TargetGroupArn"]
    listener = elb.create_listener(LoadBalancerArn=lb, Protocol="HTTPS", Port=443, Certificates=[{"CertificateArn": arn}],
                                   DefaultActions=[{"Type": "forward", "TargetGroupArn": tg}])["Listeners"][0]
    cert = acm.describe_certificate(CertificateArn=arn)["Certificate"]
    assert cert["InUseBy"] == [lb]
    err = raises("ResourceInUseException", acm.delete_certificate, CertificateArn=arn)
    assert err["Message"] == f"Certificate {arn} in account {arn.split(':')[4]} is in use."
    assert acm.describe_certificate(CertificateArn=arn)["Certificate"]["Status"] == "ISSUED"
    elb.delete_listener(ListenerArn=listener["ListenerArn"])
    elb.delete_load_balancer(LoadBalancerArn=lb)
    acm.delete_certificate(CertificateArn=arn)
    raises("ResourceNotFoundException", acm.describe_certificate, CertificateArn=arn)


def test_state_survives_restart(fresh_server):
    fresh_server.start()
    acm = fresh_server.client("acm")
    arn = acm.request_certificate(DomainName=domain(), Tags=[{"Key": "k", "Value": "v"}])["CertificateArn"]
    imported = acm.import_certificate(Certificate=CERT, PrivateKey=KEY)["CertificateArn"]
    before = acm.describe_certificate(CertificateArn=arn)["Certificate"]
    fresh_server.kill9()
    fresh_server.start()
    acm = fresh_server.client("acm")
    assert acm.describe_certificate(CertificateArn=arn)["Certificate"] == before
    assert acm.describe_certificate(CertificateArn=imported)["Certificate"]["DomainName"] == "localhost"
    assert acm.list_tags_for_certificate(CertificateArn=arn)["Tags"] == [{"Key": "k", "Value": "v"}]


UNZONED = """
Parameters:
  Name:
    Type: String
Resources:
  Cert:
    Type: AWS::CertificateManager::Certificate
    Properties:
      DomainName: !Ref Name
      ValidationMethod: DNS
      Tags:
        - Key: team
          Value: a
Outputs:
  Arn:
    Value: !Ref Cert
"""


def test_a_stack_certificate_without_a_zone_waits_for_its_record(cumulo, acm, r53, tmp_path):
    cfn = cumulo.client("cloudformation")
    name = domain()
    zid = public_zone(r53, name)
    stack = f"cert-{uuid.uuid4().hex[:8]}"
    template = tmp_path / "cert.yaml"
    template.write_text(UNZONED)
    cfn.create_stack(StackName=stack, TemplateBody=UNZONED, Parameters=[{"ParameterKey": "Name", "ParameterValue": name}])
    pending = None
    for _ in range(100):
        pending = [c for c in acm.list_certificates(CertificateStatuses=["PENDING_VALIDATION"])["CertificateSummaryList"]
                   if c["DomainName"] == name]
        if pending:
            break
        time.sleep(0.1)
    [summary] = pending
    assert cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"] == "CREATE_IN_PROGRESS"
    rec = acm.describe_certificate(CertificateArn=summary["CertificateArn"])["Certificate"][
        "DomainValidationOptions"][0]["ResourceRecord"]
    write(r53, zid, rec)
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=FAST)
    arn = cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"][0]["OutputValue"]
    assert arn == summary["CertificateArn"]
    assert acm.describe_certificate(CertificateArn=arn)["Certificate"]["Status"] == "ISSUED"
    assert {"Key": "team", "Value": "a"} in acm.list_tags_for_certificate(CertificateArn=arn)["Tags"]
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    raises("ResourceNotFoundException", acm.describe_certificate, CertificateArn=arn)
