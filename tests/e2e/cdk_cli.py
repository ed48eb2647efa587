"""What the CDK tests share: the pinned app folder (tests/cdk-serve-app, whose node_modules every
CDK app in it reuses), the `cdk` CLI run against one `cumulo serve` with one endpoint form, the
bootstrap checks and the small assertions.

With `localhost` the AWS SDK for JavaScript v3 addresses S3 virtual-hosted
(`<bucket>.localhost:PORT`). Machines whose resolver answers `*.localhost` (RFC 6761; systemd-
resolved does) need nothing else; where Node cannot resolve it `Cdk` also sets AWS's standard
per-service variable AWS_ENDPOINT_URL_S3 to the loopback address (see README), and says so in the
test output: cumulo cannot answer a DNS lookup the CLI's machine makes.
"""
import os
import shutil
import subprocess

import pytest
from botocore.exceptions import ClientError

from conftest import ROOT

APP = ROOT / "tests" / "cdk-serve-app"
ACCOUNT_ENV = "aws://000000000000/us-east-1"
QUALIFIER = "hnb659fds"


def ensure_app():
    """The app folder with its pinned packages installed (once, shared by every app in it)."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    if not (APP / "node_modules" / "aws-cdk-lib").exists():
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund"], cwd=APP, check=True, capture_output=True, timeout=900
        )
    return APP


def localhost_subdomains_resolve():
    probe = "require('dns').lookup('cumulo-probe.localhost', (e) => process.exit(e ? 1 : 0))"
    return subprocess.run(["node", "-e", probe], capture_output=True, timeout=30).returncode == 0


class Cdk:
    """Runs the app folder's pinned `cdk` CLI against one server with one endpoint form; `app` is
    the command that synthesizes (cdk.json's when None)."""

    def __init__(self, server, host, out_dir, app=None):
        self.server = server
        self.out_dir = out_dir
        self.app = app
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AWS_ENDPOINT_URL=f"http://{host}:{server.port}",
            AWS_ACCESS_KEY_ID="test",
            AWS_SECRET_ACCESS_KEY="test",
            AWS_REGION="us-east-1",
            AWS_DEFAULT_REGION="us-east-1",
            CDK_DISABLE_VERSION_CHECK="1",
        )
        if host == "localhost" and not localhost_subdomains_resolve():
            print("this machine does not resolve *.localhost: S3 through AWS_ENDPOINT_URL_S3=127.0.0.1")
            env["AWS_ENDPOINT_URL_S3"] = f"http://127.0.0.1:{server.port}"
        self.env = env

    def __call__(self, *args):
        app = ["--app", self.app] if self.app else []
        proc = subprocess.run(
            ["npx", "cdk", *args, *app, "--no-notices", "--output", str(self.out_dir)],
            cwd=APP,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, f"cdk {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout + proc.stderr


def stack_outputs(cfn, stack):
    described = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}


def gone(call, code):
    with pytest.raises(ClientError) as e:
        call()
    assert e.value.response["Error"]["Code"] == code
    return e.value


def check_bootstrap(server):
    """The CDKToolkit stack and everything it made, through each service's API; the assets bucket."""
    cfn = server.client("cloudformation")
    toolkit = cfn.describe_stacks(StackName="CDKToolkit")["Stacks"][0]
    assert toolkit["StackStatus"] == "CREATE_COMPLETE"
    boot = {o["OutputKey"]: o["OutputValue"] for o in toolkit["Outputs"]}
    bucket = f"cdk-{QUALIFIER}-assets-000000000000-us-east-1"
    assert boot["BucketName"] == bucket
    server.client("s3").head_bucket(Bucket=bucket)
    repo = f"cdk-{QUALIFIER}-container-assets-000000000000-us-east-1"
    assert server.client("ecr").describe_repositories(repositoryNames=[repo])["repositories"]
    version = server.client("ssm").get_parameter(Name=f"/cdk-bootstrap/{QUALIFIER}/version")["Parameter"]
    assert int(version["Value"]) == int(boot["BootstrapVersion"])
    iam = server.client("iam")
    for role in ("deploy-role", "file-publishing-role", "cfn-exec-role", "lookup-role"):
        iam.get_role(RoleName=f"cdk-{QUALIFIER}-{role}-000000000000-us-east-1")
    return bucket
