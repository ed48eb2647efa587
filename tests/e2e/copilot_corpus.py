"""AWS Copilot's rendered templates (../shared/corpus/copilot) as the tests deploy them: the YAML
read as CloudFormation reads it, each custom-resource function given the handler code the repo's
tests write from the seed's account of Copilot's handlers (tests/copilot/handlers), and the
parameters Copilot passes."""
import io
import json
import os
import pathlib
import zipfile

import yaml

from conftest import ROOT

CORPUS = pathlib.Path(os.environ.get("CUMULO_CORPUS") or ROOT.parent / "shared" / "corpus")
COPILOT = CORPUS / "copilot"
HANDLERS = ROOT / "tests" / "copilot" / "handlers"


class _Loader(yaml.SafeLoader):
    pass


def _tag(loader, suffix, node):
    # Copilot's renders write `!Ref: AWS::NoValue`, which CloudFormation reads as `!Ref`.
    suffix = suffix.rstrip(":")
    if isinstance(node, yaml.ScalarNode):
        v = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        v = loader.construct_sequence(node, deep=True)
    else:
        v = loader.construct_mapping(node, deep=True)
    if suffix == "Ref":
        return {"Ref": v}
    if suffix == "Condition":
        return {"Condition": v}
    if suffix == "GetAtt" and isinstance(v, str):
        v = v.split(".", 1)
    return {f"Fn::{suffix}": v}


_Loader.add_multi_constructor("!", _tag)
# YAML would read 2010-09-09 as a date; CloudFormation reads it as text.
_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in _Loader.yaml_implicit_resolvers.items()
}


def load(path):
    return yaml.load(pathlib.Path(path).read_text(), Loader=_Loader)


# Which handler file backs each function, by stack kind, as Copilot's customresource.go maps them
# (the seed's table): two Custom:: types map to several files, told apart by the stack kind.
ENV_FUNCTIONS = {
    "CertificateValidationFunction": "dns-cert-validator.js",
    "CustomDomainFunction": "custom-domain.js",
    "DNSDelegationFunction": "dns-delegation.js",
    "CertificateReplicatorFunction": "cert-replicator.js",
    "BucketCleanerFunction": "bucket-cleaner.js",
    "UniqueJSONValuesFunction": "unique-json-values.js",
}
WORKLOAD_FUNCTIONS = {
    "DynamicDesiredCountFunction": "desired-count-delegation.js",
    "EnvControllerFunction": "env-controller.js",
    "RulePriorityFunction": "alb-rule-priority-generator.js",
    "NLBCustomDomainFunction": "wkld-custom-domain.js",
    "NLBCertValidatorFunction": "wkld-cert-validator.js",
    "BacklogPerTaskCalculatorFunction": "backlog-per-task-calculator.js",
    "TriggerStateMachineFunction": "trigger-state-machine.js",
}
STATIC_SITE_FUNCTIONS = dict(
    WORKLOAD_FUNCTIONS,
    CertificateValidationFunction="wkld-cert-validator.js",
    CustomDomainFunction="wkld-custom-domain.js",
)
CERTIFICATE_HANDLERS = {"dns-cert-validator.js", "cert-replicator.js", "wkld-cert-validator.js"}


def handler_zip(name):
    """One function's package: index.js made of the shared prelude, the certificate helpers where
    the handler needs them, and the handler."""
    parts = [HANDLERS / "_prelude.js"]
    if name in CERTIFICATE_HANDLERS:
        parts.append(HANDLERS / "_acm.js")
    parts.append(HANDLERS / name)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.js", "\n".join(p.read_text() for p in parts))
    return buf.getvalue()


def upload_handlers(s3, bucket):
    """Puts every handler's package in `bucket`, keyed by its file name."""
    s3.create_bucket(Bucket=bucket)
    for f in sorted(HANDLERS.glob("[!_]*.js")):
        s3.put_object(Bucket=bucket, Key=f"{f.name}.zip", Body=handler_zip(f.name))


def with_handler_code(template, functions, bucket):
    """Gives every function Copilot deploys without Code (it injects an S3 location at deploy
    time) the package of its handler."""
    for logical, r in template["Resources"].items():
        if r.get("Type") != "AWS::Lambda::Function" or "Code" in r.get("Properties", {}):
            continue
        name = functions[logical]
        r["Properties"]["Code"] = {"S3Bucket": bucket, "S3Key": f"{name}.zip"}
    return template


def kind_functions(path):
    name = pathlib.Path(path).name
    if name.startswith("environments__"):
        return ENV_FUNCTIONS
    if "static-site" in name:
        return STATIC_SITE_FUNCTIONS
    return WORKLOAD_FUNCTIONS


def params_of(path):
    """The render's parameters file beside it (`-template` / `.stack` renamed to params)."""
    path = pathlib.Path(path)
    name = path.name.replace("-template", "-params").replace(".stack.yml", ".params.json")
    return json.loads((path.parent / name.replace(".yml", ".json")).read_text())
