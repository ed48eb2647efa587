#!/usr/bin/env python3
"""Derives the engine's compact resource-schema table from the CloudFormation registry schemas
cfn-lint ships (us-east-1), so the engine knows, for every resource type, which properties force
a replacement (createOnlyProperties), which are read-only, the primary identifier, and how
CloudFormation tags it (the schema's `tagging`: `taggable`, so stack-level tags reach it, and
`cloudFormationSystemTags`, so CloudFormation adds its `aws:cloudformation:*` tags).

Output: crates/engine/resource-schemas.txt, one line per type:
    AWS::S3::Bucket|c=BucketName,ObjectLockEnabled|r=Arn,DomainName|p=BucketName|t=system
where `t=` is `system` (taggable, with system tags), `stack` (taggable, stack tags only) or empty.
Property paths keep their nesting with '/' (e.g. KeySchema, Tags/*/Key); the `/properties/`
prefix is dropped.

Also: crates/engine/resource-schema-texts.txt, the whole schema (minified JSON) of each type cumulo
emulates (the `"AWS::X::Y"` names in the services' providers and the engine's built-in types), one
`TYPE<TAB>JSON` line each: what DescribeType answers. Only emulated types, to keep it small.
Run it again after upgrading cfn-lint (or adding a provider) and commit the result.
"""
import importlib
import re
import json
import pathlib

import cfnlint.data.schemas.providers.us_east_1 as providers

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates" / "engine" / "resource-schemas.txt"
TEXTS = ROOT / "crates" / "engine" / "resource-schema-texts.txt"
PROVIDER_SOURCES = [
    *sorted((ROOT / "crates" / "services" / "src").glob("**/provider*.rs")),
    *sorted((ROOT / "crates" / "services" / "src").glob("**/provider/*.rs")),
    ROOT / "crates" / "services" / "src" / "providers.rs",
    ROOT / "crates" / "engine" / "src" / "builtin.rs",
]
SCHEMAS = pathlib.Path(importlib.import_module("cfnlint.data.schemas").__file__).parent / "resources"


# Properties the CloudFormation resource reference documents as "Update requires: Replacement"
# although the registry schema does not list them as createOnly (the handler cannot change them in
# place: DynamoDB has no API to change a table's key schema or its local secondary indexes).
EXTRA_CREATE_ONLY = {
    "AWS::DynamoDB::Table": ["KeySchema", "LocalSecondaryIndexes"],
}


def paths(schema, key):
    out = []
    for p in schema.get(key, []):
        if p.startswith("/properties/"):
            out.append(p[len("/properties/"):])
    return ",".join(out)


def emulated_types():
    found = set()
    for f in PROVIDER_SOURCES:
        if f.exists():
            found |= set(re.findall(r'"(AWS::[A-Za-z0-9]+::[A-Za-z0-9]+)"', f.read_text()))
    return found


def tagging(schema):
    t = schema.get("tagging") or {}
    if not t.get("taggable"):
        return ""
    return "system" if t.get("cloudFormationSystemTags") else "stack"


def main():
    emulated = emulated_types()
    texts = []
    lines = []
    for type_name, digest in sorted(providers.types.items()):
        f = SCHEMAS / f"{digest}.json"
        if not f.exists():
            continue
        schema = json.loads(f.read_text())
        if type_name in emulated:
            texts.append(f"{type_name}\t{json.dumps(schema, separators=(',', ':'), sort_keys=False)}")
        create_only = paths(schema, "createOnlyProperties")
        extra = [p for p in EXTRA_CREATE_ONLY.get(type_name, []) if p not in create_only.split(",")]
        create_only = ",".join(filter(None, [create_only, *extra]))
        lines.append(
            f"{type_name}|c={create_only}"
            f"|r={paths(schema, 'readOnlyProperties')}"
            f"|p={paths(schema, 'primaryIdentifier')}"
            f"|t={tagging(schema)}"
        )
    OUT.write_text("\n".join(lines) + "\n")
    TEXTS.write_text("\n".join(texts) + "\n")
    print(f"{len(texts)} emulated types' schemas -> {TEXTS.relative_to(ROOT)}")
    print(f"{len(lines)} resource types -> {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
