#!/usr/bin/env python3
"""Writes the wire model of an awsQuery service from botocore's service-2.json, without its
documentation: operations (input shape, output shape, result wrapper) and shapes (type, members
with locationName/flattened, list member, map key/value, error codes). The `wire` crate's
`query_model` decodes requests and encodes answers from it, so a query service's handlers work
on JSON in the API's own member names.

Usage: python3 scripts/gen-query-model.py elbv2 2015-12-01 crates/services/src/elasticloadbalancing/model.json
Run it again after upgrading botocore and commit the result.
"""
import gzip
import json
import os
import sys

import botocore

service, version, out = sys.argv[1:4]
path = os.path.join(os.path.dirname(botocore.__file__), "data", service, version, "service-2.json.gz")
model = json.load(gzip.open(path))
keep_shape = ("type", "members", "member", "key", "value", "flattened", "locationName", "error", "required")
keep_member = ("shape", "locationName", "flattened")
shapes = {}
for name, shape in model["shapes"].items():
    s = {k: v for k, v in shape.items() if k in keep_shape}
    if "members" in s:
        s["members"] = {m: {k: v for k, v in spec.items() if k in keep_member} for m, spec in s["members"].items()}
    for k in ("member", "key", "value"):
        if k in s:
            s[k] = {kk: vv for kk, vv in s[k].items() if kk in keep_member}
    shapes[name] = s
operations = {
    name: {
        "input": op.get("input", {}).get("shape"),
        "output": op.get("output", {}).get("shape"),
        "wrapper": op.get("output", {}).get("resultWrapper"),
    }
    for name, op in model["operations"].items()
}
doc = {"namespace": model["metadata"].get("xmlNamespace"), "operations": operations, "shapes": shapes}
with open(out, "w") as f:
    json.dump(doc, f, separators=(",", ":"), sort_keys=True)
    f.write("\n")
