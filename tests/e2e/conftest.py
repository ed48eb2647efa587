"""Shared fixtures: start the real `cumulo` binary and talk to it with boto3 and the AWS CLI.

Each test module gets the session server through `cumulo` (persistent store in a temp dir);
tests that restart or kill the server start their own with `CumuloServer`.
"""
import json
import os
import pathlib
import re
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


class RawResponse:
    """A parsed HTTP response read off a raw socket."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lowercase name -> value (last one wins)
        self.body = body

    def request_id(self):
        return self.headers.get("x-amzn-requestid") or self.headers.get("x-amz-request-id")

    def error_code(self):
        """The AWS error code from an XML (`<Code>`) or JSON (`__type`) error body, else None."""
        text = self.body.decode("utf-8", "replace").strip()
        if text.startswith("{"):
            try:
                value = json.loads(text).get("__type")
            except ValueError:
                return None
            return value.rsplit("#", 1)[-1] if value else None
        match = re.search(r"<Code>([^<]+)</Code>", text)
        return match.group(1) if match else None


def raw_http(port, data, timeout=10):
    """Sends `data` (a whole request, bytes) on a fresh connection and reads the response until the
    server closes it; send `Connection: close` (or HTTP/1.0) so it does."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before reading a body it refuses
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    raw = b"".join(chunks)
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines or not lines[0].startswith("HTTP/"):
        raise AssertionError(f"no HTTP response: {raw[:200]!r}")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _dechunk(body)
    return RawResponse(status, headers, body)


def _dechunk(data):
    out = b""
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2 :]
    return out


def build_request(method, path, headers=(), body=b"", version="HTTP/1.1", port=4566):
    """Bytes of one HTTP request; adds Host, Content-Length and Connection: close unless given."""
    names = {k.lower() for k, _ in headers}
    lines = [f"{method} {path} {version}"]
    if "host" not in names:
        lines.append(f"Host: 127.0.0.1:{port}")
    lines += [f"{k}: {v}" for k, v in headers]
    if "content-length" not in names and (body or method in ("POST", "PUT")):
        lines.append(f"Content-Length: {len(body)}")
    if "connection" not in names:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


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

    def raw(self, method, path, headers=(), body=b"", version="HTTP/1.1"):
        """One raw HTTP request to this server (see `raw_http`)."""
        return raw_http(self.port, build_request(method, path, headers, body, version, self.port))

    def kill9(self):
        self.stop(signal.SIGKILL)

    def client(self, service, region="us-east-1", key="test", secret="test", **kw):
        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=region,
            aws_access_key_id=key,
            aws_secret_access_key=secret,
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
