"""Route 53 through boto3 and the AWS CLI: public and private hosted zones (VPCs checked against
EC2), change batches validated whole with AWS's InvalidChangeBatch messages (a refused batch
changes nothing), aliases and routing fields, ListResourceRecordSets order and paging,
ListHostedZonesByName order, GetChange and its waiter, health checks, tags, errors in Route 53's
ErrorResponse shape, restart survival, Cloud Map namespaces as zones, and a CloudFormation stack
deployed, updated and deleted with the CLI."""

import uuid

import botocore.exceptions
import pytest

FAST = {"Delay": 1, "MaxAttempts": 30}


def ref():
    return f"ref-{uuid.uuid4().hex}"


def domain():
    return f"z{uuid.uuid4().hex[:10]}.example.com"


def raises(code, fn, *args, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        fn(*args, **kw)
    err = e.value.response["Error"]
    assert err["Code"] == code, err
    return err


@pytest.fixture(scope="module")
def r53(cumulo):
    return cumulo.client("route53")


@pytest.fixture(scope="module")
def ec2(cumulo):
    return cumulo.client("ec2")


def zone(r53, name=None, **kw):
    name = name or domain()
    return r53.create_hosted_zone(Name=name, CallerReference=ref(), **kw)


def change(action, name, rtype, values, ttl=300, **extra):
    rrs = {"Name": name, "Type": rtype, **extra}
    if values is not None:
        rrs["TTL"] = ttl
        rrs["ResourceRecords"] = [{"Value": v} for v in values]
    return {"Action": action, "ResourceRecordSet": rrs}


def records(r53, zid):
    return r53.list_resource_record_sets(HostedZoneId=zid)["ResourceRecordSets"]


def test_public_zone_has_four_name_servers_ns_and_soa(r53):
    name = domain()
    created = zone(r53, name, HostedZoneConfig={"Comment": "hello"})
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 201
    hz = created["HostedZone"]
    zid = hz["Id"].split("/")[-1]
    assert hz["Id"] == f"/hostedzone/{zid}" and zid.startswith("Z")
    assert hz["Name"] == name + "." and hz["ResourceRecordSetCount"] == 2
    assert hz["Config"] == {"Comment": "hello", "PrivateZone": False}
    assert created["Location"] == f"https://route53.amazonaws.com/2013-04-01/hostedzone/{zid}"
    assert created["ChangeInfo"]["Status"] == "PENDING"
    servers = created["DelegationSet"]["NameServers"]
    assert len(servers) == 4 and [s.rsplit(".", 1)[-1] for s in servers] == ["com", "net", "org", "uk"]
    got = r53.get_hosted_zone(Id=zid)
    assert got["HostedZone"] == hz and got["DelegationSet"]["NameServers"] == servers
    ns, soa = records(r53, zid)
    assert (ns["Type"], ns["TTL"], [v["Value"] for v in ns["ResourceRecords"]]) == (
        "NS", 172800, [s + "." for s in servers])
    assert soa["Type"] == "SOA" and soa["TTL"] == 900
    assert soa["ResourceRecords"][0]["Value"] == f"{servers[0]}. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400"
    r53.update_hosted_zone_comment(Id=zid, Comment="changed")
    assert r53.get_hosted_zone(Id=zid)["HostedZone"]["Config"]["Comment"] == "changed"
    deleted = r53.delete_hosted_zone(Id=zid)
    assert deleted["ChangeInfo"]["Status"] == "PENDING"
    err = raises("NoSuchHostedZone", r53.get_hosted_zone, Id=zid)
    assert err["Message"] == f"No hosted zone found with ID: {zid}" and err["Type"] == "Sender"


def test_caller_reference_is_idempotency_and_bad_names_are_refused(r53):
    caller = ref()
    r53.create_hosted_zone(Name=domain(), CallerReference=caller)
    before = r53.get_hosted_zone_count()["HostedZoneCount"]
    err = raises("HostedZoneAlreadyExists", r53.create_hosted_zone, Name=domain(), CallerReference=caller)
    assert err["Message"] == "A hosted zone has already been created with the specified caller reference."
    raises("InvalidDomainName", r53.create_hosted_zone, Name="bad name..com", CallerReference=ref())
    assert r53.get_hosted_zone_count()["HostedZoneCount"] == before
    # A caller reference is never accepted again, even once its zone is gone.
    zid = r53.list_hosted_zones_by_name()["HostedZones"]
    [mine] = [z for z in zid if z["CallerReference"] == caller]
    r53.delete_hosted_zone(Id=mine["Id"])
    raises("HostedZoneAlreadyExists", r53.create_hosted_zone, Name=domain(), CallerReference=caller)


def test_private_zone_is_associated_with_vpcs_checked_against_ec2(r53, ec2):
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    other = ec2.create_vpc(CidrBlock="10.42.0.0/16")["Vpc"]["VpcId"]
    err = raises("InvalidVPCId", zone, r53, VPC={"VPCRegion": "us-east-1", "VPCId": "vpc-0123456789abcdef0"})
    assert err["Message"] == "The VPC ID is invalid."
    created = zone(r53, VPC={"VPCRegion": "us-east-1", "VPCId": vpc}, HostedZoneConfig={"Comment": "test"})
    zid = created["HostedZone"]["Id"].split("/")[-1]
    assert created["VPC"] == {"VPCRegion": "us-east-1", "VPCId": vpc} and "DelegationSet" not in created
    assert created["HostedZone"]["Config"] == {"Comment": "test", "PrivateZone": True}
    got = r53.get_hosted_zone(Id=zid)
    assert got["VPCs"] == [{"VPCRegion": "us-east-1", "VPCId": vpc}] and "DelegationSet" not in got
    r53.associate_vpc_with_hosted_zone(HostedZoneId=zid, VPC={"VPCRegion": "us-east-1", "VPCId": other})
    assert len(r53.get_hosted_zone(Id=zid)["VPCs"]) == 2
    by_vpc = r53.list_hosted_zones_by_vpc(VPCId=other, VPCRegion="us-east-1")["HostedZoneSummaries"]
    assert [s["HostedZoneId"] for s in by_vpc] == [zid]
    assert by_vpc[0]["Owner"]["OwningAccount"].isdigit()
    r53.disassociate_vpc_from_hosted_zone(HostedZoneId=zid, VPC={"VPCRegion": "us-east-1", "VPCId": other})
    raises("LastVPCAssociation", r53.disassociate_vpc_from_hosted_zone, HostedZoneId=zid,
           VPC={"VPCRegion": "us-east-1", "VPCId": vpc})
    raises("VPCAssociationNotFound", r53.disassociate_vpc_from_hosted_zone, HostedZoneId=zid,
           VPC={"VPCRegion": "us-east-1", "VPCId": other})
    public = zone(r53)["HostedZone"]["Id"]
    raises("PublicZoneVPCAssociation", r53.associate_vpc_with_hosted_zone, HostedZoneId=public,
           VPC={"VPCRegion": "us-east-1", "VPCId": vpc})


def test_change_batches_are_validated_whole_with_aws_messages(r53):
    name = domain()
    zid = zone(r53, name)["HostedZone"]["Id"]
    www = f"www.{name}."
    r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Changes": [
        change("CREATE", www, "A", ["10.0.0.1"])]})
    before = records(r53, zid)
    err = raises("InvalidChangeBatch", r53.change_resource_record_sets, HostedZoneId=zid, ChangeBatch={"Changes": [
        change("CREATE", f"new.{name}", "A", ["10.0.0.5"]),
        change("CREATE", www, "A", ["10.0.0.2"])]})
    assert err["Message"] == f"[Tried to create resource record set [name='{www}', type='A'] but it already exists]"
    err = raises("InvalidChangeBatch", r53.change_resource_record_sets, HostedZoneId=zid, ChangeBatch={"Changes": [
        change("DELETE", f"gone.{name}", "A", ["10.0.0.1"])]})
    assert err["Message"] == f"[Tried to delete resource record set [name='gone.{name}.', type='A'] but it was not found]"
    err = raises("InvalidChangeBatch", r53.change_resource_record_sets, HostedZoneId=zid, ChangeBatch={"Changes": [
        change("DELETE", www, "A", ["10.9.9.9"])]})
    assert err["Message"] == (f"[Tried to delete resource record set [name='{www}', type='A'] "
                              "but the values provided do not match the current values]")
    err = raises("InvalidChangeBatch", r53.change_resource_record_sets, HostedZoneId=zid, ChangeBatch={"Changes": [
        change("CREATE", "x.elsewhere.org", "A", ["10.0.0.1"]),
        change("CREATE", f"ip.{name}", "A", ["not-an-ip"])]})
    assert err["Message"] == (f"[RRSet with DNS name x.elsewhere.org. is not permitted in zone {name}., "
                              "Invalid Resource Record: 'FATAL problem: ARRDATAIllegalIPv4Address "
                              "(Value is not a valid IPv4 address) encountered with 'not-an-ip'']")
    assert records(r53, zid) == before
    # A DELETE then CREATE of the same set in one batch is an update; UPSERT replaces.
    r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Changes": [
        change("DELETE", www, "A", ["10.0.0.1"]), change("CREATE", www, "A", ["10.0.0.2"])]})
    r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Changes": [
        change("UPSERT", www, "A", ["10.0.0.3", "10.0.0.4"], ttl=60)]})
    [a] = [r for r in records(r53, zid) if r["Name"] == www]
    assert a == {"Name": www, "Type": "A", "TTL": 60,
                 "ResourceRecords": [{"Value": "10.0.0.3"}, {"Value": "10.0.0.4"}]}
    err = raises("HostedZoneNotEmpty", r53.delete_hosted_zone, Id=zid)
    assert err["Message"] == ("The specified hosted zone contains non-required resource record sets  "
                              "and so cannot be deleted.")


def test_aliases_and_routing_fields_round_trip(r53):
    name = domain()
    zid = zone(r53, name)["HostedZone"]["Id"].split("/")[-1]
    r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Changes": [
        change("CREATE", f"target.{name}", "A", ["10.0.0.1"]),
        change("CREATE", f"api.{name}", "A", None, SetIdentifier="region-1", Weight=255,
               AliasTarget={"HostedZoneId": "Z3AQBSTGFYJSTF", "DNSName": "S3-Website-US-East-1.amazonaws.com",
                            "EvaluateTargetHealth": False}),
        change("CREATE", f"api.{name}", "A", None, SetIdentifier="region-2", Weight=0,
               AliasTarget={"HostedZoneId": zid, "DNSName": f"target.{name}", "EvaluateTargetHealth": True}),
        change("CREATE", f"geo.{name}", "A", ["10.0.0.2"], SetIdentifier="eu", GeoLocation={"ContinentCode": "EU"}),
        change("CREATE", f"fo.{name}", "A", ["10.0.0.3"], SetIdentifier="primary", Failover="PRIMARY"),
        change("CREATE", f"lat.{name}", "A", ["10.0.0.4"], SetIdentifier="use1", Region="us-east-1"),
        change("CREATE", f"mv.{name}", "A", ["10.0.0.5"], SetIdentifier="one", MultiValueAnswer=True),
    ]})
    got = {(r["Name"], r.get("SetIdentifier")): r for r in records(r53, zid)}
    one = got[(f"api.{name}.", "region-1")]
    assert one["AliasTarget"] == {"HostedZoneId": "Z3AQBSTGFYJSTF", "DNSName": "s3-website-us-east-1.amazonaws.com.",
                                  "EvaluateTargetHealth": False}
    assert one["Weight"] == 255 and "TTL" not in one and "ResourceRecords" not in one
    assert got[(f"api.{name}.", "region-2")]["Weight"] == 0
    assert got[(f"geo.{name}.", "eu")]["GeoLocation"] == {"ContinentCode": "EU"}
    assert got[(f"fo.{name}.", "primary")]["Failover"] == "PRIMARY"
    assert got[(f"lat.{name}.", "use1")]["Region"] == "us-east-1"
    assert got[(f"mv.{name}.", "one")]["MultiValueAnswer"] is True
    err = raises("InvalidChangeBatch", r53.change_resource_record_sets, HostedZoneId=zid, ChangeBatch={"Changes": [
        change("CREATE", f"bad.{name}", "A", None,
               AliasTarget={"HostedZoneId": zid, "DNSName": f"nothing.{name}", "EvaluateTargetHealth": False})]})
    assert err["Message"] == (f"[Tried to create an alias that targets nothing.{name}., type A in zone {zid}, "
                              "but that target was not found]")
    err = raises("InvalidChangeBatch", r53.change_resource_record_sets, HostedZoneId=zid, ChangeBatch={"Changes": [
        change("CREATE", f"w.{name}", "A", ["10.0.0.1"], Weight=10)]})
    assert err["Message"].startswith("[Invalid request: Missing field 'SetIdentifier' in Change with [Action=CREATE")


def test_record_sets_list_in_aws_order_and_page(r53):
    name = domain()
    zid = zone(r53, name)["HostedZone"]["Id"]
    r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Changes": [
        change("CREATE", f"www.{name}", "A", ["10.0.0.1"]),
        change("CREATE", f"a.{name}", "TXT", ['"x"']),
        change("CREATE", name, "MX", ["10 mail.example.com"]),
        change("CREATE", f"*.{name}", "A", ["10.0.0.2"]),
        change("CREATE", f"b.a.{name}", "CNAME", ["a.example.org"]),
    ]})
    order = [(r["Name"], r["Type"]) for r in records(r53, zid)]
    n = name + "."
    assert order == [(n, "MX"), (n, "NS"), (n, "SOA"), (f"\\052.{n}", "A"), (f"a.{n}", "TXT"),
                     (f"b.a.{n}", "CNAME"), (f"www.{n}", "A")]
    page = r53.list_resource_record_sets(HostedZoneId=zid, MaxItems="3")
    assert [(r["Name"], r["Type"]) for r in page["ResourceRecordSets"]] == order[:3]
    assert page["IsTruncated"] is True and page["MaxItems"] == "3"
    assert (page["NextRecordName"], page["NextRecordType"]) == order[3]
    page = r53.list_resource_record_sets(HostedZoneId=zid, MaxItems="3", StartRecordName=page["NextRecordName"],
                                         StartRecordType=page["NextRecordType"])
    assert [(r["Name"], r["Type"]) for r in page["ResourceRecordSets"]] == order[3:6]
    start = r53.list_resource_record_sets(HostedZoneId=zid, StartRecordName=f"b.a.{name}")
    assert [(r["Name"], r["Type"]) for r in start["ResourceRecordSets"]] == order[5:]
    assert start["IsTruncated"] is False
    pages = r53.get_paginator("list_resource_record_sets").paginate(HostedZoneId=zid, PaginationConfig={"PageSize": 2})
    assert [(r["Name"], r["Type"]) for p in pages for r in p["ResourceRecordSets"]] == order


def test_zones_by_name_in_reversed_label_order(r53):
    tag = uuid.uuid4().hex[:8]
    names = [f"{tag}.org", f"b.{tag}.com", f"{tag}.com", f"a.{tag}.com"]
    for n in names:
        zone(r53, n)
    listed = [z["Name"] for z in r53.list_hosted_zones_by_name()["HostedZones"]]
    mine = [n for n in listed if tag in n]
    assert mine == [f"{tag}.com.", f"a.{tag}.com.", f"b.{tag}.com.", f"{tag}.org."]
    page = r53.list_hosted_zones_by_name(DNSName=f"a.{tag}.com", MaxItems="1")
    assert [z["Name"] for z in page["HostedZones"]] == [f"a.{tag}.com."]
    assert page["IsTruncated"] is True and page["NextDNSName"] == f"b.{tag}.com."
    everything = [z["Id"] for p in r53.get_paginator("list_hosted_zones").paginate(PaginationConfig={"PageSize": 2})
                  for z in p["HostedZones"]]
    assert len(everything) == r53.get_hosted_zone_count()["HostedZoneCount"] == len(set(everything))


def test_get_change_goes_insync_and_the_waiter_passes(r53, cumulo):
    name = domain()
    zid = zone(r53, name)["HostedZone"]["Id"]
    info = r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Comment": "c", "Changes": [
        change("CREATE", f"w.{name}", "A", ["10.0.0.1"])]})["ChangeInfo"]
    assert info["Status"] == "PENDING" and info["Id"].startswith("/change/C") and info["Comment"] == "c"
    r53.get_waiter("resource_record_sets_changed").wait(Id=info["Id"], WaiterConfig=FAST)
    assert r53.get_change(Id=info["Id"])["ChangeInfo"]["Status"] == "INSYNC"
    raises("NoSuchChange", r53.get_change, Id="CNOTHERE")
    out = cumulo.aws("route53", "get-change", "--id", info["Id"])
    assert out["ChangeInfo"]["Status"] == "INSYNC"


def test_health_checks(r53):
    caller = ref()
    config = {"Type": "HTTP", "IPAddress": "1.1.1.1", "ResourcePath": "/health",
              "FullyQualifiedDomainName": "example.com"}
    created = r53.create_health_check(CallerReference=caller, HealthCheckConfig=config)
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 201
    hc = created["HealthCheck"]
    assert hc["HealthCheckConfig"] == {**config, "Port": 80, "RequestInterval": 30, "FailureThreshold": 3,
                                       "MeasureLatency": False, "Inverted": False, "Disabled": False,
                                       "EnableSNI": False}
    assert hc["HealthCheckVersion"] == 1 and hc["CallerReference"] == caller
    again = r53.create_health_check(CallerReference=caller, HealthCheckConfig=config)["HealthCheck"]
    assert again["Id"] == hc["Id"]
    raises("HealthCheckAlreadyExists", r53.create_health_check, CallerReference=caller,
           HealthCheckConfig={**config, "ResourcePath": "/other"})
    updated = r53.update_health_check(HealthCheckId=hc["Id"], HealthCheckVersion=1, Port=8080)["HealthCheck"]
    assert updated["HealthCheckVersion"] == 2 and updated["HealthCheckConfig"]["Port"] == 8080
    raises("HealthCheckVersionMismatch", r53.update_health_check, HealthCheckId=hc["Id"], HealthCheckVersion=1,
           Port=81)
    assert r53.get_health_check(HealthCheckId=hc["Id"])["HealthCheck"] == updated
    assert hc["Id"] in [h["Id"] for h in r53.list_health_checks()["HealthChecks"]]
    name = domain()
    zid = zone(r53, name)["HostedZone"]["Id"]
    r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Changes": [
        change("CREATE", f"h.{name}", "A", ["10.0.0.1"], SetIdentifier="p", Failover="PRIMARY",
               HealthCheckId=hc["Id"])]})
    raises("HealthCheckInUse", r53.delete_health_check, HealthCheckId=hc["Id"])
    r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Changes": [
        change("DELETE", f"h.{name}", "A", ["10.0.0.1"], SetIdentifier="p", Failover="PRIMARY",
               HealthCheckId=hc["Id"])]})
    count = r53.get_health_check_count()["HealthCheckCount"]
    r53.delete_health_check(HealthCheckId=hc["Id"])
    assert r53.get_health_check_count()["HealthCheckCount"] == count - 1
    raises("NoSuchHealthCheck", r53.get_health_check, HealthCheckId=hc["Id"])


def test_tags_on_zones_and_health_checks(r53):
    zid = zone(r53)["HostedZone"]["Id"].split("/")[-1]
    r53.change_tags_for_resource(ResourceType="hostedzone", ResourceId=zid,
                                 AddTags=[{"Key": "team", "Value": "a"}, {"Key": "env", "Value": "dev"}])
    r53.change_tags_for_resource(ResourceType="hostedzone", ResourceId=zid, RemoveTagKeys=["env"])
    got = r53.list_tags_for_resource(ResourceType="hostedzone", ResourceId=zid)["ResourceTagSet"]
    assert got == {"ResourceType": "hostedzone", "ResourceId": zid, "Tags": [{"Key": "team", "Value": "a"}]}
    many = r53.list_tags_for_resources(ResourceType="hostedzone", ResourceIds=[zid])["ResourceTagSets"]
    assert many == [got]
    raises("NoSuchHostedZone", r53.list_tags_for_resource, ResourceType="hostedzone", ResourceId="ZNOPE")


def test_query_logging_configs_are_stored_and_reported(r53):
    zid = zone(r53)["HostedZone"]["Id"].split("/")[-1]
    arn = "arn:aws:logs:us-east-1:000000000000:log-group:/aws/route53/example"
    created = r53.create_query_logging_config(HostedZoneId=zid, CloudWatchLogsLogGroupArn=arn)
    config = created["QueryLoggingConfig"]
    assert config["HostedZoneId"] == zid and config["CloudWatchLogsLogGroupArn"] == arn
    assert r53.get_query_logging_config(Id=config["Id"])["QueryLoggingConfig"] == config
    raises("QueryLoggingConfigAlreadyExists", r53.create_query_logging_config, HostedZoneId=zid,
           CloudWatchLogsLogGroupArn=arn)
    assert r53.list_query_logging_configs(HostedZoneId=zid)["QueryLoggingConfigs"] == [config]
    r53.delete_query_logging_config(Id=config["Id"])
    raises("NoSuchQueryLoggingConfig", r53.get_query_logging_config, Id=config["Id"])


def test_unimplemented_operations_answer_501_naming_themselves(cumulo):
    out = cumulo.aws("route53", "list-traffic-policies", check=False)
    assert out.returncode != 0 and "ListTrafficPolicies" in out.stderr


def test_state_survives_restart(fresh_server):
    fresh_server.start()
    r53 = fresh_server.client("route53")
    name = domain()
    zid = zone(r53, name)["HostedZone"]["Id"]
    r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Changes": [
        change("CREATE", f"w.{name}", "A", ["10.0.0.1"])]})
    r53.change_tags_for_resource(ResourceType="hostedzone", ResourceId=zid.split("/")[-1],
                                 AddTags=[{"Key": "k", "Value": "v"}])
    hc = r53.create_health_check(CallerReference=ref(), HealthCheckConfig={"Type": "TCP", "IPAddress": "1.2.3.4",
                                                                            "Port": 22})["HealthCheck"]["Id"]
    before = records(r53, zid)
    fresh_server.kill9()
    fresh_server.start()
    r53 = fresh_server.client("route53")
    assert records(r53, zid) == before
    assert r53.list_tags_for_resource(ResourceType="hostedzone", ResourceId=zid.split("/")[-1])[
        "ResourceTagSet"]["Tags"] == [{"Key": "k", "Value": "v"}]
    assert r53.get_health_check(HealthCheckId=hc)["HealthCheck"]["HealthCheckConfig"]["Port"] == 22


def test_cloud_map_dns_namespaces_are_route53_zones(cumulo, r53, ec2):
    sd = cumulo.client("servicediscovery")
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    name = f"svc{uuid.uuid4().hex[:8]}.local"
    sd.create_private_dns_namespace(Name=name, Vpc=vpc)
    [ns] = [n for n in sd.list_namespaces()["Namespaces"] if n["Name"] == name]
    zid = sd.get_namespace(Id=ns["Id"])["Namespace"]["Properties"]["DnsProperties"]["HostedZoneId"]
    hz = r53.get_hosted_zone(Id=zid)
    assert hz["HostedZone"]["Name"] == name + "." and hz["HostedZone"]["Config"]["PrivateZone"] is True
    assert hz["VPCs"] == [{"VPCRegion": "us-east-1", "VPCId": vpc}]
    listed = cumulo.aws("route53", "list-hosted-zones")["HostedZones"]
    assert f"/hostedzone/{zid}" in [z["Id"] for z in listed]
    svc = sd.create_service(Name="api", NamespaceId=ns["Id"], DnsConfig={
        "RoutingPolicy": "MULTIVALUE", "DnsRecords": [{"Type": "A", "TTL": 10}, {"Type": "SRV", "TTL": 10}]})["Service"]
    sd.register_instance(ServiceId=svc["Id"], InstanceId="i-1",
                         Attributes={"AWS_INSTANCE_IPV4": "10.0.0.7", "AWS_INSTANCE_PORT": "8080"})
    got = {(r["Name"], r["Type"]): r for r in records(r53, zid)}
    a = got[(f"api.{name}.", "A")]
    assert a["SetIdentifier"] == "i-1" and a["MultiValueAnswer"] is True
    assert a["ResourceRecords"] == [{"Value": "10.0.0.7"}] and a["TTL"] == 10
    assert got[(f"api.{name}.", "SRV")]["ResourceRecords"] == [{"Value": f"1 1 8080 i-1.api.{name}."}]
    assert got[(f"i-1.api.{name}.", "A")]["ResourceRecords"] == [{"Value": "10.0.0.7"}]
    sd.deregister_instance(ServiceId=svc["Id"], InstanceId="i-1")
    assert [r["Type"] for r in records(r53, zid)] == ["NS", "SOA"]
    sd.delete_service(Id=svc["Id"])
    sd.delete_namespace(Id=ns["Id"])
    raises("NoSuchHostedZone", r53.get_hosted_zone, Id=zid)
    public = f"pub{uuid.uuid4().hex[:8]}.example.com"
    sd.create_public_dns_namespace(Name=public)
    [pns] = [n for n in sd.list_namespaces()["Namespaces"] if n["Name"] == public]
    pz = sd.get_namespace(Id=pns["Id"])["Namespace"]["Properties"]["DnsProperties"]["HostedZoneId"]
    assert r53.get_hosted_zone(Id=pz)["HostedZone"]["Config"]["PrivateZone"] is False
    sd.delete_namespace(Id=pns["Id"])
    raises("NoSuchHostedZone", r53.get_hosted_zone, Id=pz)


STACK = """
Parameters:
  ZoneName:
    Type: String
  Ip:
    Type: String
    Default: 10.0.0.1
  Comment:
    Type: String
    Default: first
  Vpc:
    Type: String
Resources:
  Private:
    Type: AWS::Route53::HostedZone
    Properties:
      Name: !Sub "internal.${ZoneName}"
      VPCs:
        - VPCId: !Ref Vpc
          VPCRegion: !Ref AWS::Region
  Zone:
    Type: AWS::Route53::HostedZone
    Properties:
      Name: !Ref ZoneName
      HostedZoneConfig:
        Comment: !Ref Comment
      HostedZoneTags:
        - Key: team
          Value: dns
      QueryLoggingConfig:
        CloudWatchLogsLogGroupArn: !Sub "arn:aws:logs:us-east-1:${AWS::AccountId}:log-group:/aws/route53/${ZoneName}"
  Www:
    Type: AWS::Route53::RecordSet
    Properties:
      HostedZoneId: !Ref Zone
      Name: !Sub "www.${ZoneName}"
      Type: A
      TTL: "60"
      ResourceRecords:
        - !Ref Ip
  Apex:
    Type: AWS::Route53::RecordSet
    Properties:
      HostedZoneName: !Sub "${ZoneName}."
      Name: !Sub "${ZoneName}."
      Type: A
      AliasTarget:
        HostedZoneId: !Ref Zone
        DNSName: !Ref Www
        EvaluateTargetHealth: false
  Group:
    Type: AWS::Route53::RecordSetGroup
    Properties:
      HostedZoneId: !Ref Zone
      RecordSets:
        - Name: !Sub "one.${ZoneName}"
          Type: TXT
          TTL: "300"
          ResourceRecords: ['"hello"']
        - Name: !Sub "two.${ZoneName}"
          Type: CNAME
          TTL: "300"
          ResourceRecords: [!Sub "www.${ZoneName}"]
  Check:
    Type: AWS::Route53::HealthCheck
    Properties:
      HealthCheckConfig:
        Type: HTTPS
        FullyQualifiedDomainName: !Sub "www.${ZoneName}"
        ResourcePath: /health
      HealthCheckTags:
        - Key: team
          Value: dns
  Cert:
    Type: AWS::CertificateManager::Certificate
    Properties:
      DomainName: !Sub "www.${ZoneName}"
      SubjectAlternativeNames: [!Sub "*.${ZoneName}"]
      ValidationMethod: DNS
      DomainValidationOptions:
        - DomainName: !Sub "www.${ZoneName}"
          HostedZoneId: !Ref Zone
        - DomainName: !Sub "*.${ZoneName}"
          HostedZoneId: !Ref Zone
Outputs:
  ZoneId:
    Value: !Ref Zone
  ZoneIdAtt:
    Value: !GetAtt Zone.Id
  NameServers:
    Value: !Join [",", !GetAtt Zone.NameServers]
  Www:
    Value: !Ref Www
  CheckId:
    Value: !GetAtt Check.HealthCheckId
  Cert:
    Value: !Ref Cert
  Private:
    Value: !Ref Private
"""


def test_cloudformation_deploy_update_delete(cumulo, r53, ec2, tmp_path):
    cfn = cumulo.client("cloudformation")
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    acm = cumulo.client("acm")
    name = domain()
    stack = f"r53-{uuid.uuid4().hex[:8]}"
    template = tmp_path / "r53.yaml"
    template.write_text(STACK)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", f"ZoneName={name}", f"Vpc={vpc}")
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    zid = out["ZoneId"]
    assert out["ZoneIdAtt"] == zid and zid.startswith("Z")
    hz = r53.get_hosted_zone(Id=zid)
    assert hz["HostedZone"]["Name"] == name + "." and hz["HostedZone"]["Config"]["Comment"] == "first"
    assert out["NameServers"].split(",") == hz["DelegationSet"]["NameServers"]
    assert out["Www"] == f"www.{name}"
    private = r53.get_hosted_zone(Id=out["Private"])
    assert private["HostedZone"]["Config"]["PrivateZone"] is True
    assert private["VPCs"] == [{"VPCRegion": "us-east-1", "VPCId": vpc}]
    tags = r53.list_tags_for_resource(ResourceType="hostedzone", ResourceId=zid)["ResourceTagSet"]["Tags"]
    assert {"Key": "team", "Value": "dns"} in tags
    [logging] = r53.list_query_logging_configs(HostedZoneId=zid)["QueryLoggingConfigs"]
    assert logging["CloudWatchLogsLogGroupArn"].endswith(f":log-group:/aws/route53/{name}")
    got = {(r["Name"], r["Type"]): r for r in records(r53, zid)}
    assert got[(f"www.{name}.", "A")]["ResourceRecords"] == [{"Value": "10.0.0.1"}]
    assert got[(f"www.{name}.", "A")]["TTL"] == 60
    assert got[(f"{name}.", "A")]["AliasTarget"] == {"HostedZoneId": zid, "DNSName": f"www.{name}.",
                                                      "EvaluateTargetHealth": False}
    assert got[(f"one.{name}.", "TXT")]["ResourceRecords"] == [{"Value": '"hello"'}]
    assert (f"two.{name}.", "CNAME") in got
    hc = r53.get_health_check(HealthCheckId=out["CheckId"])["HealthCheck"]["HealthCheckConfig"]
    assert hc["Port"] == 443 and hc["EnableSNI"] is True
    cert = acm.describe_certificate(CertificateArn=out["Cert"])["Certificate"]
    assert cert["Status"] == "ISSUED"
    validations = [o["ResourceRecord"] for o in cert["DomainValidationOptions"]]
    assert len(validations) == 2 and all(o["ValidationStatus"] == "SUCCESS" for o in cert["DomainValidationOptions"])
    for v in validations:
        assert got[(v["Name"], "CNAME")]["ResourceRecords"] == [{"Value": v["Value"]}]

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", f"ZoneName={name}", f"Vpc={vpc}", "Ip=10.0.0.2",
               "Comment=second")
    assert r53.get_hosted_zone(Id=zid)["HostedZone"]["Config"]["Comment"] == "second"
    got = {(r["Name"], r["Type"]): r for r in records(r53, zid)}
    assert got[(f"www.{name}.", "A")]["ResourceRecords"] == [{"Value": "10.0.0.2"}]

    # As on AWS, the certificate's validation record outlives it, so the zone is not empty.
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    s = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    assert s["StackStatus"] == "DELETE_FAILED"
    failed = [e for e in cfn.describe_stack_events(StackName=stack)["StackEvents"]
              if e["LogicalResourceId"] == "Zone" and e["ResourceStatus"] == "DELETE_FAILED"]
    assert "HostedZoneNotEmpty" in failed[0]["ResourceStatusReason"] or \
        "non-required resource record sets" in failed[0]["ResourceStatusReason"]
    left = sorted((r["Name"], r["Type"]) for r in records(r53, zid))
    assert left == sorted([(f"{name}.", "NS"), (f"{name}.", "SOA")] + [(v["Name"], "CNAME") for v in validations])
    raises("ResourceNotFoundException", acm.describe_certificate, CertificateArn=out["Cert"])
    raises("NoSuchHealthCheck", r53.get_health_check, HealthCheckId=out["CheckId"])
    r53.change_resource_record_sets(HostedZoneId=zid, ChangeBatch={"Changes": [
        change("DELETE", v["Name"], "CNAME", [v["Value"]]) for v in validations]})
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    raises("NoSuchHostedZone", r53.get_hosted_zone, Id=zid)
    raises("NoSuchHostedZone", r53.get_hosted_zone, Id=out["Private"])


def test_dnssec_types_are_refused_by_name(cumulo, r53):
    cfn = cumulo.client("cloudformation")
    zid = zone(r53)["HostedZone"]["Id"].split("/")[-1]
    stack = f"dnssec-{uuid.uuid4().hex[:8]}"
    cfn.create_stack(StackName=stack, TemplateBody=f"""
Resources:
  Signing:
    Type: AWS::Route53::DNSSEC
    Properties:
      HostedZoneId: {zid}
""")
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=FAST)
    [failed] = [e for e in cfn.describe_stack_events(StackName=stack)["StackEvents"]
                if e["LogicalResourceId"] == "Signing" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert "DNSSEC" in failed["ResourceStatusReason"] and "HostedZoneId" in failed["ResourceStatusReason"]
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
