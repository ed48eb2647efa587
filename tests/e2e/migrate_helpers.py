"""What test_migrate.py and test_migrate_generic.py share: the `cumulo migrate` runners, the
check that a Terraform import id names a live resource on the account, and the Terraform
checks (python-hcl2's parse, and terraform's own parser through `terraform fmt`)."""
import os
import shutil
import subprocess

from conftest import BIN, CREDS


def migrate(*args):
    return subprocess.run([str(BIN), "migrate", *args], capture_output=True, text=True, timeout=60)


def take_inventory(cumulo, tmp_path, *selection, **extra_env):
    out = tmp_path / "inventory.json"
    env = {**os.environ, **CREDS, "AWS_ENDPOINT_URL": cumulo.endpoint, "AWS_REGION": "us-east-1", **extra_env}
    proc = subprocess.run([str(BIN), "migrate", "inventory", *selection, "-o", str(out)],
                          capture_output=True, text=True, timeout=120, env=env)
    return proc, out


def rehearse(inventory, out, *extra):
    return subprocess.run([str(BIN), "migrate", "rehearse", str(inventory), "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=120)


LIVE_CHECKED = {"aws_vpc", "aws_subnet", "aws_security_group", "aws_security_group_rule", "aws_s3_bucket",
                "aws_sqs_queue", "aws_sqs_queue_policy", "aws_sns_topic", "aws_iam_role", "aws_iam_role_policy",
                "aws_cloudwatch_log_group", "aws_route53_zone", "aws_route53_record", "aws_ssm_parameter",
                "aws_eip", "aws_lb", "aws_lb_listener", "aws_lb_target_group", "aws_ecs_cluster",
                "aws_route_table", "aws_nat_gateway", "aws_efs_file_system", "aws_acm_certificate",
                "aws_s3_bucket_policy", "aws_sns_topic_subscription", "aws_dynamodb_table", "aws_lambda_function"}


def live(cumulo, tf, import_id):
    """Whether the resource a Terraform import id names answers its service."""
    ec2 = cumulo.client("ec2")
    elb = cumulo.client("elbv2")
    if tf == "aws_lb":
        return elb.describe_load_balancers(LoadBalancerArns=[import_id])["LoadBalancers"][0]["LoadBalancerArn"] == import_id
    if tf == "aws_lb_listener":
        return elb.describe_listeners(ListenerArns=[import_id])["Listeners"][0]["ListenerArn"] == import_id
    if tf == "aws_lb_target_group":
        return elb.describe_target_groups(TargetGroupArns=[import_id])["TargetGroups"][0]["TargetGroupArn"] == import_id
    if tf == "aws_ecs_cluster":
        return cumulo.client("ecs").describe_clusters(clusters=[import_id])["clusters"][0]["status"] == "ACTIVE"
    if tf == "aws_route_table":
        return ec2.describe_route_tables(RouteTableIds=[import_id])["RouteTables"][0]["RouteTableId"] == import_id
    if tf == "aws_nat_gateway":
        return ec2.describe_nat_gateways(NatGatewayIds=[import_id])["NatGateways"][0]["NatGatewayId"] == import_id
    if tf == "aws_efs_file_system":
        return cumulo.client("efs").describe_file_systems(FileSystemId=import_id)["FileSystems"][0]["FileSystemId"] == import_id
    if tf == "aws_acm_certificate":
        return cumulo.client("acm").describe_certificate(CertificateArn=import_id)["Certificate"]["CertificateArn"] == import_id
    if tf == "aws_vpc":
        return ec2.describe_vpcs(VpcIds=[import_id])["Vpcs"][0]["VpcId"] == import_id
    if tf == "aws_eip":
        return ec2_address(cumulo, import_id) is not None
    if tf == "aws_subnet":
        return ec2.describe_subnets(SubnetIds=[import_id])["Subnets"][0]["SubnetId"] == import_id
    if tf == "aws_security_group":
        return ec2.describe_security_groups(GroupIds=[import_id])["SecurityGroups"][0]["GroupId"] == import_id
    if tf == "aws_security_group_rule":
        group, direction, protocol, low, high, source = import_id.split("_", 5)
        sg = ec2.describe_security_groups(GroupIds=[group])["SecurityGroups"][0]
        rules = sg["IpPermissions" if direction == "ingress" else "IpPermissionsEgress"]
        source = group if source == "self" else source
        every = protocol == "all"
        return any((p["IpProtocol"] == "-1" if every else
                    (p["IpProtocol"], p["FromPort"], p["ToPort"]) == (protocol, int(low), int(high)))
                   and (any(r["CidrIp"] == source for r in p.get("IpRanges", []))
                        or any(g["GroupId"] == source for g in p.get("UserIdGroupPairs", [])))
                   for p in rules)
    if tf == "aws_s3_bucket":
        return cumulo.client("s3").head_bucket(Bucket=import_id)["ResponseMetadata"]["HTTPStatusCode"] == 200
    if tf == "aws_sqs_queue":
        return "QueueArn" in cumulo.client("sqs").get_queue_attributes(QueueUrl=import_id, AttributeNames=["All"])["Attributes"]
    if tf == "aws_sqs_queue_policy":
        return "Policy" in cumulo.client("sqs").get_queue_attributes(QueueUrl=import_id, AttributeNames=["Policy"])["Attributes"]
    if tf == "aws_sns_topic":
        return cumulo.client("sns").get_topic_attributes(TopicArn=import_id)["Attributes"]["TopicArn"] == import_id
    if tf == "aws_iam_role":
        return cumulo.client("iam").get_role(RoleName=import_id)["Role"]["RoleName"] == import_id
    if tf == "aws_iam_role_policy":
        role, policy = import_id.split(":")
        return cumulo.client("iam").get_role_policy(RoleName=role, PolicyName=policy)["PolicyName"] == policy
    if tf == "aws_cloudwatch_log_group":
        groups = cumulo.client("logs").describe_log_groups(logGroupNamePrefix=import_id)["logGroups"]
        return any(g["logGroupName"] == import_id for g in groups)
    if tf == "aws_route53_zone":
        return cumulo.client("route53").get_hosted_zone(Id=import_id)["HostedZone"]["Id"].endswith(import_id)
    if tf == "aws_route53_record":
        zone, rest = import_id.split("_", 1)
        name, kind = rest.rsplit("_", 1)
        records = cumulo.client("route53").list_resource_record_sets(HostedZoneId=zone)["ResourceRecordSets"]
        return any(r["Name"].rstrip(".") == name and r["Type"] == kind for r in records)
    if tf == "aws_ssm_parameter":
        return cumulo.client("ssm").get_parameter(Name=import_id)["Parameter"]["Name"] == import_id
    if tf == "aws_s3_bucket_policy":
        return "Policy" in cumulo.client("s3").get_bucket_policy(Bucket=import_id)
    if tf == "aws_sns_topic_subscription":
        subs = cumulo.client("sns").list_subscriptions()["Subscriptions"]
        return any(s["SubscriptionArn"] == import_id for s in subs)
    if tf == "aws_dynamodb_table":
        return cumulo.client("dynamodb").describe_table(TableName=import_id)["Table"]["TableName"] == import_id
    if tf == "aws_lambda_function":
        return cumulo.client("lambda").get_function(FunctionName=import_id)["Configuration"]["FunctionName"] == import_id
    raise AssertionError(f"no live check for {tf}")


def ec2_address(cumulo, allocation_id):
    found = cumulo.client("ec2").describe_addresses(AllocationIds=[allocation_id])["Addresses"]
    return found[0]["PublicIp"] if found else None


def unq(value):
    """python-hcl2 keeps a string literal's quotes."""
    return value[1:-1] if isinstance(value, str) and value.startswith('"') else value


def parse_terraform(out):
    """Every `*.tf` of `out/terraform` parsed by python-hcl2, by file stem."""
    import hcl2
    parsed = {}
    for tf in (out / "terraform").glob("*.tf"):
        with tf.open() as f:
            parsed[tf.stem] = hcl2.load(f)
    return parsed


def terraform_fmt(out, required=False):
    """terraform's own parser accepts every file (fmt parses offline, with no provider); skipped
    when terraform is not installed unless `required`. Whether it ran."""
    terraform = shutil.which("terraform")
    assert terraform or not required, "terraform is not installed"
    if not terraform:
        return False
    fmt = subprocess.run([terraform, "fmt", "-write=false", "-list=false", str(out / "terraform")],
                         capture_output=True, text=True, timeout=60)
    assert fmt.returncode == 0, fmt.stderr
    return True


def imports_live(cumulo, imports, only=None):
    """Asserts every import of a manifest (of the types in `only`, if given) names a live resource
    on the account; how many were checked."""
    checked = 0
    for i in imports:
        tf = i["to"].split(".")[0]
        if only is None or tf in only:
            assert live(cumulo, tf, i["id"]), i
            checked += 1
    return checked
