"""The README's shell examples, run as written: every ```sh block after the set-up lines, in a
fresh directory, with bash -e, the AWS CLI that `pip install awscli` installs and `cumulo` on PATH
(this checkout's debug build, which is what `cargo install --path crates/cli` would put there).

Two things differ from a reader's terminal, and only these: the set-up block (the README's
first two commands) is not run here, since `./scripts/test` is this very suite and CI runs it;
and when port 4566 is taken on the test machine the examples' `4566` becomes a free port, said
in the test output. A block that runs `npx cdk` runs in a copy of tests/cdk-app, the CDK app the
direct-deploy tests synthesize ("in your CDK app's directory").
"""
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess

import pytest

from conftest import BIN, ROOT, free_port

README = ROOT / "README.md"
CDK_APP = ROOT / "tests" / "cdk-app"
SETUP = ["cargo run --release --bin cumulo -- serve", "./scripts/test"]


def sh_blocks():
    return re.findall(r"^```sh\n(.*?)^```", README.read_text(), flags=re.S | re.M)


def commands(block):
    """The block's commands, without comments and blank lines."""
    lines = (line.split("#", 1)[0].strip() for line in block.splitlines())
    return [line for line in lines if line]


def port_4566_free():
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", 4566))
        except OSError:
            return False
    return True


def test_readme_starts_with_the_two_setup_commands():
    assert commands(sh_blocks()[0]) == SETUP


EXAMPLES = sh_blocks()[1:]

# What each example must print, besides exiting 0: one marker per block, so that a block whose
# commands printed nothing useful (a server that never answered, say) cannot pass.
EXPECTED = {
    "aws s3 mb": ["make_bucket: demo", '"QueueUrl"', '"MessageId"', '"services"'],
    "cumulo deploy template.yaml": ["[+] 90", "IN_SYNC", "demo: DELETE_COMPLETE"],
    "npx cdk bootstrap": ["bootstrapped", "CdkApp", "destroyed"],
    "cumulo migrate retain-patch": ["every resource retained", "app-data-"],
    "cumulo migrate inventory --stack web": ["1 stack(s), 2 resource(s)", "2 import(s); handed off: web"],
    "cumulo console --print": ["/_cumulo/console/", '"message_id"', '"body":"hi"', '"state":"visible"'],
}


@pytest.mark.parametrize("index", range(len(EXAMPLES)), ids=lambda i: f"block{i + 1}")
def test_readme_example_runs_as_written(index, tmp_path):
    block = EXAMPLES[index]
    if not port_4566_free():
        port = str(free_port())
        print(f"port 4566 is taken on this machine: the example runs on {port}")
        block = block.replace("4566", port)
    workdir = tmp_path / "work"
    if "npx cdk" in block:
        if not (CDK_APP / "node_modules" / "aws-cdk-lib").exists():
            subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=CDK_APP, check=True, timeout=900)
        shutil.copytree(CDK_APP, workdir, ignore=shutil.ignore_patterns("node_modules", "cdk.out"))
        (workdir / "node_modules").symlink_to(CDK_APP / "node_modules")
    else:
        workdir.mkdir()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "cumulo").symlink_to(pathlib.Path(BIN).resolve())
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CUMULO_", "CDK_"))}
    env.update(PATH=f"{bindir}{os.pathsep}{env['PATH']}", HOME=str(home), CDK_DISABLE_VERSION_CHECK="1")
    env["npm_config_cache"] = os.environ.get("npm_config_cache", str(pathlib.Path.home() / ".npm"))
    proc = subprocess.Popen(
        ["bash", "-e", "-o", "pipefail", "-c", block],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=900)
    finally:
        # A failed command leaves the example's background server running: end the whole group.
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, f"README example failed (exit {proc.returncode}):\n{block}\n--- output ---\n{out}"
    [markers] = [m for key, m in EXPECTED.items() if key in block] or [[]]
    assert markers, f"no expectation declared for this README example:\n{block}"
    for marker in markers:
        assert marker in out, f"{marker!r} missing from the output of:\n{block}\n--- output ---\n{out}"
