#!/usr/bin/env python3
"""Writes the wire model of a rest-xml service from botocore's service-2.json, without its
documentation and only for the operations named: each operation's HTTP method, URI and
success code, input and output shapes, and every shape they reach (type, members with their
location (uri/querystring/header) and locationName, list members, the payload member,
required members, error status). The `wire` crate's `rest_xml_model` reads requests and writes
answers from it, so a service's handlers work on JSON in the API's own member names.

Usage: python3 scripts/gen-rest-xml-model.py cloudfront 2020-05-31 OUT.json Op1 Op2 ...
       (`ALL` for every operation of the model; maps keep their key/value shapes and
       timestamps their format, which the SDK direction, writing requests, needs.)
Run it again after upgrading botocore and commit the result.
"""
import gzip
import json
import os
import sys

import botocore

service, version, out, *ops = sys.argv[1:]
path = os.path.join(os.path.dirname(botocore.__file__), "data", service, version, "service-2.json.gz")
model = json.load(gzip.open(path))
keep_shape = ("type", "members", "member", "key", "value", "flattened", "locationName", "payload", "required",
              "timestampFormat", "xmlNamespace")
keep_member = ("shape", "location", "locationName", "flattened", "timestampFormat", "xmlNamespace",
               "xmlAttribute")
shapes = {}


def visit(name):
    if name in shapes:
        return
    shape = model["shapes"][name]
    s = {k: v for k, v in shape.items() if k in keep_shape}
    if "error" in shape:
        s["status"] = shape["error"].get("httpStatusCode", 400)
    shapes[name] = s
    if "members" in s:
        s["members"] = {m: {k: v for k, v in spec.items() if k in keep_member} for m, spec in s["members"].items()}
        for spec in s["members"].values():
            visit(spec["shape"])
    for inner in ("member", "key", "value"):
        if inner in s:
            s[inner] = {k: v for k, v in s[inner].items() if k in keep_member}
            visit(s[inner]["shape"])


operations = {}
if ops == ["ALL"]:
    ops = sorted(model["operations"])
for name in ops:
    op = model["operations"][name]
    operations[name] = {
        "method": op["http"]["method"],
        "uri": op["http"]["requestUri"],
        "code": op["http"].get("responseCode", 200),
        "input": op.get("input", {}).get("shape"),
        "output": op.get("output", {}).get("shape"),
    }
    for k in ("input", "output"):
        if operations[name][k]:
            visit(operations[name][k])
    for e in op.get("errors", []):
        visit(e["shape"])
doc = {"namespace": f"http://{service}.amazonaws.com/doc/{version}/", "operations": operations, "shapes": shapes}
with open(out, "w") as f:
    json.dump(doc, f, separators=(",", ":"), sort_keys=True)
    f.write("\n")
