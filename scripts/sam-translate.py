#!/usr/bin/env python3
"""The oracle of cumulo's SAM transform: AWS's own translator (samtranslator, installed with
cfn-lint) run on templates, as CloudFormation runs it, writing what it answers as JSON.

    scripts/sam-translate.py                 # regenerate crates/sam/tests/expected/
    scripts/sam-translate.py OUT_DIR TEMPLATE...

For each TEMPLATE, OUT_DIR/<name>.json is {"source": TEMPLATE, "template": <processed>} or
{"source": TEMPLATE, "error": [messages]}. Without arguments, from the repository root: every
SAM template of ../shared/corpus/templates-good and of crates/sam/tests/templates/, into
crates/sam/tests/expected/ (the snapshots crates/sam/tests/samtranslator.rs compares with).
Run through `samtranslator.translator.transform.transform`, the entry point AWS's transform
runs. Region us-east-1 (partition aws), no parameter values beyond the template's defaults (as
cumulo's tests call the Rust transform). The Serverless Application Repository is not reached:
an `ApplicationId` location fails (cumulo refuses it too). Managed policy names resolve through
samtranslator's bundled map, as cumulo's do. The translator's clock (an Api's `AlwaysDeploy`
names its Deployment after `int(time.time())`) is frozen at CLOCK, the instant
crates/sam/tests/samtranslator.rs gives cumulo's transform, so such a Deployment's logical id and
description compare exactly instead of modulo their hash.
"""
import json
import logging
import os
import sys

os.environ["AWS_DEFAULT_REGION"] = "us-east-1"

import yaml  # noqa: E402
from samtranslator.model.exceptions import InvalidDocumentException  # noqa: E402
from samtranslator.model import apigateway  # noqa: E402
from samtranslator.plugins.application import serverless_app_plugin  # noqa: E402
from samtranslator.translator.transform import transform  # noqa: E402
from samtranslator.yaml_helper import yaml_parse  # noqa: E402


CLOCK = 1_700_000_000


class FrozenClock:
    """The `time` module as the translator's Deployment sees it: always CLOCK."""

    @staticmethod
    def time():
        return CLOCK


apigateway.time = FrozenClock


class NoIam:
    """The managed policy loader: no IAM to list policies from (the bundled map answers)."""

    def load(self):
        return {}


class NoSar:
    """A SAR client that answers nothing: ApplicationId locations fail by name."""

    def __getattr__(self, name):
        def refuse(**kwargs):
            raise RuntimeError(f"the Serverless Application Repository is not reachable ({name})")

        return refuse


# `transform` (the entry point CloudFormation's SAM transform runs, with its Python 2.7 dict
# emulation for REST APIs) builds its own plugins: its SAR client is this one.
_plugin_init = serverless_app_plugin.ServerlessAppPlugin.__init__


def _no_sar_init(self, *args, **kwargs):
    kwargs["sar_client"] = NoSar()
    _plugin_init(self, *args, **kwargs)


serverless_app_plugin.ServerlessAppPlugin.__init__ = _no_sar_init


def translate(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # CloudFormation hands the transform JSON: YAML's dates are strings by then.
    template = json.loads(json.dumps(yaml_parse(text), default=str))
    try:
        return {"template": transform(template, {}, NoIam())}
    except InvalidDocumentException as e:
        return {"error": sorted(c.message for c in e.causes)}
    except Exception as e:  # noqa: BLE001 - any failure is the oracle's answer
        return {"error": [f"{type(e).__name__}: {e}"]}


def sam_templates():
    corpus = "../shared/corpus/templates-good"
    found = []
    for root, _, files in os.walk(corpus):
        for name in sorted(files):
            path = os.path.join(root, name)
            if name.endswith((".yaml", ".yml", ".json")) and "Serverless-2016-10-31" in open(path, encoding="utf-8", errors="replace").read():
                found.append(("corpus__" + os.path.basename(root) + "__" + name, path))
    own = "crates/sam/tests/templates"
    for name in sorted(os.listdir(own)):
        found.append(("own__" + name, os.path.join(own, name)))
    return sorted(found)


def main():
    logging.disable(logging.CRITICAL)
    if len(sys.argv) > 1:
        out_dir, *paths = sys.argv[1:]
        named = [(os.path.basename(p), p) for p in paths]
    else:
        out_dir = "crates/sam/tests/expected"
        named = sam_templates()
        for old in os.listdir(out_dir) if os.path.isdir(out_dir) else []:
            os.remove(os.path.join(out_dir, old))
    os.makedirs(out_dir, exist_ok=True)
    for name, path in named:
        answer = {"source": path, **translate(path)}
        with open(os.path.join(out_dir, os.path.splitext(name)[0] + ".json"), "w", encoding="utf-8") as f:
            json.dump(answer, f, indent=1, sort_keys=True, default=str)
            f.write("\n")


if __name__ == "__main__":
    main()
