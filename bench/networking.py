#!/usr/bin/env python3
"""Networking CloudFormation benchmark: cumulo (persistent store on) side by side with moto_server.

The shape of bench/cloudformation.py (same servers, timing and checks) over a networking stack:
one VPC with an internet gateway and its attachment, then --count (70) of each of: subnet,
route table, subnet/route-table association, route to the gateway, security group, ingress rule
(from the next group) and egress rule: 3 + 7 x 70 = 493 resources. Phases: create, update (a
Tags change on every taggable resource and a Description change on every rule: one mutable
property per resource where its type has one; associations and routes have none short of
replacement and are left as they are), delete. After each phase every subnet, route table,
security group and rule is checked through EC2's own API, so a phase that reports success
without doing the work shows in the "applied" column.

Usage: cargo build --bin cumulo && python3 bench/networking.py [--count 70] [--skip-moto]
"""
import argparse
import json
import pathlib
import time
import uuid

from cloudformation import Server, guarded, upload, wait_terminal


def template(prefix, n, version):
    tags = [{"Key": "bench", "Value": prefix}, {"Key": "v", "Value": f"v{version}"}]
    res = {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16", "Tags": tags}},
        "Igw": {"Type": "AWS::EC2::InternetGateway", "Properties": {"Tags": tags}},
        "Attach": {
            "Type": "AWS::EC2::VPCGatewayAttachment",
            "Properties": {"VpcId": {"Ref": "Vpc"}, "InternetGatewayId": {"Ref": "Igw"}},
        },
    }
    for i in range(n):
        res[f"Subnet{i}"] = {
            "Type": "AWS::EC2::Subnet",
            "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": f"10.0.{i}.0/24", "Tags": tags},
        }
        res[f"Rt{i}"] = {"Type": "AWS::EC2::RouteTable", "Properties": {"VpcId": {"Ref": "Vpc"}, "Tags": tags}}
        res[f"Assoc{i}"] = {
            "Type": "AWS::EC2::SubnetRouteTableAssociation",
            "Properties": {"SubnetId": {"Ref": f"Subnet{i}"}, "RouteTableId": {"Ref": f"Rt{i}"}},
        }
        res[f"Route{i}"] = {
            "Type": "AWS::EC2::Route",
            "DependsOn": "Attach",
            "Properties": {"RouteTableId": {"Ref": f"Rt{i}"}, "DestinationCidrBlock": "0.0.0.0/0", "GatewayId": {"Ref": "Igw"}},
        }
        res[f"Sg{i}"] = {
            "Type": "AWS::EC2::SecurityGroup",
            "Properties": {"GroupDescription": f"bench {i}", "VpcId": {"Ref": "Vpc"}, "Tags": tags},
        }
        res[f"In{i}"] = {
            "Type": "AWS::EC2::SecurityGroupIngress",
            "Properties": {
                "GroupId": {"Fn::GetAtt": [f"Sg{i}", "GroupId"]},
                "IpProtocol": "tcp", "FromPort": 443, "ToPort": 443,
                "SourceSecurityGroupId": {"Fn::GetAtt": [f"Sg{(i + 1) % n}", "GroupId"]},
                "Description": f"v{version}",
            },
        }
        res[f"Out{i}"] = {
            "Type": "AWS::EC2::SecurityGroupEgress",
            "Properties": {
                "GroupId": {"Fn::GetAtt": [f"Sg{i}", "GroupId"]},
                "IpProtocol": "tcp", "FromPort": 5432, "ToPort": 5432,
                "CidrIp": f"10.0.{i}.0/24", "Description": f"v{version}",
            },
        }
    return json.dumps({"Resources": res})


def pages(client, op, key, **kwargs):
    out = []
    for page in client.get_paginator(op).paginate(**kwargs):
        out += page[key]
    return out


def check(server, prefix, n, version, present=True):
    """How many of the 4n checked resources are as the phase should have left them: subnets,
    route tables (with their route to the gateway), security groups (each tagged with the
    phase's version) and ingress rules (with its description); after delete, how many are gone."""
    ec2 = server.client("ec2")
    want = {"Key": "v", "Value": f"v{version}"}
    tag = [{"Name": "tag:bench", "Values": [prefix]}]
    try:
        subnets = pages(ec2, "describe_subnets", "Subnets", Filters=tag)
        tables = pages(ec2, "describe_route_tables", "RouteTables", Filters=tag)
        groups = pages(ec2, "describe_security_groups", "SecurityGroups", Filters=tag)
    except Exception:  # noqa: BLE001 - an error is counted as nothing applied
        return 0
    pairs = [pair for g in groups for p in g["IpPermissions"] for pair in p.get("UserIdGroupPairs", [])]
    if not present:
        return 4 * n - len(subnets) - len(tables) - len(groups) - len(pairs)
    routed = [t for t in tables if any(r.get("GatewayId", "").startswith("igw-") for r in t["Routes"])]
    return (
        sum(want in r.get("Tags", []) for r in subnets + routed + groups)
        + sum(p.get("Description") == f"v{version}" for p in pairs)
    )


def run(server, n):
    cfn = server.client("cloudformation")
    prefix = f"n{uuid.uuid4().hex[:6]}"
    stack = f"{prefix}-net"
    rows = []

    def create():
        sid = cfn.create_stack(StackName=stack, **upload(server, prefix, template(prefix, n, 1)))["StackId"]
        return wait_terminal(cfn, sid)

    def update():
        cfn.update_stack(StackName=stack, **upload(server, prefix, template(prefix, n, 2)))
        return wait_terminal(cfn, stack)

    def delete():
        sid = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
        cfn.delete_stack(StackName=stack)
        return wait_terminal(cfn, sid)

    for name, fn, version, present in [("create", create, 1, True), ("update", update, 2, True), ("delete", delete, 2, False)]:
        t0 = time.perf_counter()
        status = guarded(fn)
        elapsed = time.perf_counter() - t0
        applied = check(server, prefix, n, version, present)
        rows.append({"phase": name, "seconds": elapsed, "status": status, "applied": f"{applied}/{4 * n}"})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=70, help="subnets (and of each other per-subnet type)")
    ap.add_argument("--skip-moto", action="store_true")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    results = {}
    for kind in ["cumulo"] + ([] if args.skip_moto else ["moto"]):
        server = Server(kind)
        try:
            for service in ("cloudformation", "s3", "ec2"):
                server.client(service)
            run(server, 2)  # untimed warm-up (moto imports its EC2 backend on first use)
            rows = run(server, args.count)
            for r in rows:
                print(f"{kind:6} {3 + 7 * args.count} resources {r['phase']:7} {r['seconds']:8.3f}s  {r['status']:28} applied {r['applied']}", flush=True)
            results[kind] = rows
        finally:
            server.stop()
    if "moto" in results:
        print("\nspeed-up (moto seconds / cumulo seconds), same phase:")
        for c, m in zip(results["cumulo"], results["moto"]):
            print(f"  {c['phase']:7} {m['seconds'] / max(c['seconds'], 1e-9):7.1f}x  (moto applied {m['applied']})")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
