#!/usr/bin/env python3
"""Writes the wire model of an awsQuery (or EC2) service from botocore's service-2.json, without
its documentation: operations (input shape, output shape, result wrapper) and shapes (type,
members with locationName/queryName/flattened, list member, map key/value, error codes). The
`wire` crate's `query_model` decodes requests and encodes answers from it, so a query service's
handlers work on JSON in the API's own member names; and, the other way round, writes cumulo's
own requests to the service and reads its answers (Step Functions' aws-sdk Tasks, API Gateway's
AWS integrations).

Usage: python3 scripts/gen-query-model.py elbv2 2015-12-01 crates/services/src/elasticloadbalancing/model.json
       python3 scripts/gen-query-model.py ec2 2016-11-15 crates/services/src/query_models/ec2.json.gz \
           --client --ops-from crates/services/src/ec2

--client keeps only what a caller of the service needs: the operations' input and output shapes
and the shapes they reach (no error shapes, no `required`); --outputs only the outputs (for a
reader of answers alone). --ops-from DIR (or one .rs file) keeps only the operations whose names
appear as string literals in those Rust sources (the operations cumulo's emulation implements;
the others answer 501 anyway). Run it again after upgrading botocore, or
after the emulation gains operations, and commit the result.
"""
import argparse
import glob
import gzip
import json
import os
import re

import botocore

# SQS's botocore model is JSON now and no longer names the query protocol's elements; these are
# the names its query answers use (the SQS API reference's XML examples), put back so the query
# answers cumulo's SQS writes can be read by the model.
OVERLAY = {
    "sqs": {
        ("ReceiveMessageResult", "Messages"): "Message",
        ("Message", "Attributes"): "Attribute",
        ("Message", "MessageAttributes"): "MessageAttribute",
        ("GetQueueAttributesResult", "Attributes"): "Attribute",
        ("ListQueuesResult", "QueueUrls"): "QueueUrl",
        ("ListDeadLetterSourceQueuesResult", "queueUrls"): "QueueUrl",
        ("ListQueueTagsResult", "Tags"): "Tag",
        ("SendMessageBatchResult", "Successful"): "SendMessageBatchResultEntry",
        ("SendMessageBatchResult", "Failed"): "BatchResultErrorEntry",
        ("DeleteMessageBatchResult", "Successful"): "DeleteMessageBatchResultEntry",
        ("DeleteMessageBatchResult", "Failed"): "BatchResultErrorEntry",
        ("ChangeMessageVisibilityBatchResult", "Successful"): "ChangeMessageVisibilityBatchResultEntry",
        ("ChangeMessageVisibilityBatchResult", "Failed"): "BatchResultErrorEntry",
        ("MessageAttributeValue", "StringListValues"): "StringListValue",
        ("MessageAttributeValue", "BinaryListValues"): "BinaryListValue",
    },
}
# The key and value element names of SQS's flattened maps.
MAP_NAMES = {"sqs": {"MessageSystemAttributeMap": ("Name", "Value"), "QueueAttributeMap": ("Name", "Value"),
                     "MessageBodyAttributeMap": ("Name", "Value"), "TagMap": ("Key", "Value")}}

parser = argparse.ArgumentParser()
parser.add_argument("service")
parser.add_argument("version")
parser.add_argument("out")
parser.add_argument("--client", action="store_true")
parser.add_argument("--ops-from")
parser.add_argument("--outputs", action="store_true")
args = parser.parse_args()

path = os.path.join(os.path.dirname(botocore.__file__), "data", args.service, args.version, "service-2.json.gz")
model = json.load(gzip.open(path))
keep_shape = ("type", "members", "member", "key", "value", "flattened", "locationName")
if not args.client:
    keep_shape += ("error", "required")
keep_member = ("shape", "locationName", "queryName", "flattened")
shapes = {}
for name, shape in model["shapes"].items():
    s = {k: v for k, v in shape.items() if k in keep_shape}
    if "members" in s:
        s["members"] = {m: {k: v for k, v in spec.items() if k in keep_member} for m, spec in s["members"].items()}
        for m, spec in s["members"].items():
            loc = OVERLAY.get(args.service, {}).get((name, m))
            if loc:
                spec["locationName"] = loc
    for k in ("member", "key", "value"):
        if k in s:
            s[k] = {kk: vv for kk, vv in s[k].items() if kk in keep_member}
    if name in MAP_NAMES.get(args.service, {}):
        s["key"]["locationName"], s["value"]["locationName"] = MAP_NAMES[args.service][name]
    shapes[name] = s

names = set(model["operations"])
if args.ops_from:
    files = [args.ops_from] if args.ops_from.endswith(".rs") else glob.glob(
        os.path.join(args.ops_from, "**", "*.rs"), recursive=True)
    text = "".join(open(f).read() for f in files)
    names &= set(re.findall(r'"([A-Z][A-Za-z0-9]+)"', text))
# A JSON model read for the service's query answers (SQS) has no result wrappers: the query
# protocol's is always `<Op>Result`.
json_model = model["metadata"]["protocol"] == "json"
operations = {
    name: {
        "input": op.get("input", {}).get("shape"),
        "output": op.get("output", {}).get("shape"),
        "wrapper": op.get("output", {}).get("resultWrapper") or (f"{name}Result" if json_model and "output" in op else None),
    }
    for name, op in model["operations"].items()
    if name in names
}
if args.outputs:
    for o in operations.values():
        o["input"] = None

if args.client:
    # Only the shapes the operations' inputs and outputs reach.
    reached, todo = set(), [s for o in operations.values() for s in (o["input"], o["output"]) if s]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        s = shapes[name]
        todo += [m["shape"] for m in s.get("members", {}).values()]
        todo += [s[k]["shape"] for k in ("member", "key", "value") if k in s]
    shapes = {k: v for k, v in shapes.items() if k in reached}

doc = {"namespace": model["metadata"].get("xmlNamespace"), "operations": operations, "shapes": shapes}
if model["metadata"]["protocol"] == "ec2":
    doc["protocol"] = "ec2"
text = json.dumps(doc, separators=(",", ":"), sort_keys=True) + "\n"
if args.out.endswith(".gz"):
    # Client models are compressed (a ninth of the size in the binary); mtime 0 keeps the
    # output the same from run to run.
    with open(args.out, "wb") as f:
        f.write(gzip.compress(text.encode(), compresslevel=9, mtime=0))
else:
    with open(args.out, "w") as f:
        f.write(text)
