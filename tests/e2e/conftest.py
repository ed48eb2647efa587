"""Shared fixtures: start the real `cumulo` binary and talk to it with boto3 and the AWS CLI.

Each test module gets the session server through `cumulo` (persistent store in a temp dir);
tests that restart or kill the server start their own with `CumuloServer`.
"""
import json
import os
import pathlib
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

import boto3
import botocore.config
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("CUMULO_BIN", ROOT / "target" / "debug" / "cumulo"))

CREDS = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CumuloServer:
    """A `cumulo serve` process on a free port."""

    def __init__(self, data_dir=None, extra_args=(), env=None):
        self.port = free_port()
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        self.env = env or {}
        self.proc = None

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        args = [str(BIN), "serve", "--port", str(self.port)]
        args += ["--data-dir", str(self.data_dir)] if self.data_dir else ["--in-memory"]
        args += self.extra_args
        env = dict(os.environ, **self.env)
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"cumulo exited: {self.proc.stderr.read().decode()}")
            try:
                with urllib.request.urlopen(self.endpoint + "/_cumulo/health", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("cumulo did not become healthy")

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill9(self):
        self.stop(signal.SIGKILL)

    def client(self, service, region="us-east-1", **kw):
        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=region,
            aws_access_key_id="test",
            aws_secret_access_key="test",
            config=botocore.config.Config(retries={"max_attempts": 1}, **kw),
        )

    def aws(self, *args, check=True, region="us-east-1"):
        """Runs the AWS CLI against this server; returns parsed JSON output (or text)."""
        env = {**os.environ, **CREDS, "AWS_DEFAULT_REGION": region}
        proc = subprocess.run(
            ["aws", "--endpoint-url", self.endpoint, "--output", "json", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"aws {' '.join(args)} failed: {proc.stderr}")
        if not check:
            return proc
        out = proc.stdout.strip()
        return json.loads(out) if out.startswith(("{", "[")) else out


@pytest.fixture(scope="session")
def cumulo():
    with tempfile.TemporaryDirectory() as d:
        server = CumuloServer(data_dir=pathlib.Path(d)).start()
        yield server
        server.stop()


@pytest.fixture
def fresh_server(tmp_path):
    """A server of the test's own, on a persistent data dir, for restart and crash tests."""
    server = CumuloServer(data_dir=tmp_path / "data")
    yield server
    server.stop()
