"""cumulo's Python runtime shim: the loop AWS's Python runtime runs, against cumulo's Lambda
Runtime API (AWS_LAMBDA_RUNTIME_API), with the machine's python3. No Docker, no downloads.

Like AWS's runtime it puts the task root and /opt/python (here: each layer's python/ directory,
on PYTHONPATH) on sys.path, makes `cfnresponse` importable, folds stderr into stdout so cumulo
can attribute every line to its invocation, and reports errors as
{errorMessage, errorType, requestId, stackTrace}.
"""

import http.client
import importlib
import json
import os
import sys
import time
import traceback

API = os.environ["AWS_LAMBDA_RUNTIME_API"]
FENCE = "\x1ecumulo-fence "

sys.stderr = sys.stdout
sys.path.insert(0, os.environ["LAMBDA_TASK_ROOT"])


def request(method, path, body=None, headers=None):
    host, port = API.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port))
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    result = (resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
    conn.close()
    return result


def fence(tag):
    sys.stdout.write(FENCE + tag + "\n")
    sys.stdout.flush()


def error_payload(exc, request_id=None):
    frames = traceback.format_list(traceback.extract_tb(exc.__traceback__)[1:])
    payload = {
        "errorMessage": str(exc),
        "errorType": type(exc).__name__,
        "requestId": request_id or "",
        "stackTrace": frames,
    }
    return payload


def log_error(payload):
    # AWS's Python runtime logs the error as `[ERROR] Type: message` and the traceback.
    text = "[ERROR] %s: %s\nTraceback (most recent call last):\n%s" % (
        payload["errorType"],
        payload["errorMessage"],
        "".join(payload["stackTrace"]),
    )
    sys.stdout.write(text.replace("\n", "\r") + "\n")
    sys.stdout.flush()


def post_error(path, payload, error_type):
    body = json.dumps(payload).encode()
    request(
        "POST",
        path,
        body,
        {"Content-Type": "application/json", "Lambda-Runtime-Function-Error-Type": error_type},
    )


def load_handler():
    spec = os.environ.get("_HANDLER", "")
    module_name, _, fn_name = spec.rpartition(".")
    if not module_name or not fn_name:
        raise _RuntimeError("Runtime.MalformedHandlerName", "Bad handler '%s': not enough values to unpack (expected 2, got 1)" % spec)
    module_name = module_name.replace("/", ".")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        raise _RuntimeError("Runtime.ImportModuleError", "Unable to import module '%s': %s" % (module_name, e))
    except SyntaxError as e:
        raise _RuntimeError("Runtime.UserCodeSyntaxError", "Syntax error in module '%s': %s" % (module_name, e))
    fn = getattr(module, fn_name, None)
    if fn is None:
        raise _RuntimeError("Runtime.HandlerNotFound", "Handler '%s' missing on module '%s'" % (fn_name, module_name))
    return fn


class _RuntimeError(Exception):
    def __init__(self, error_type, message):
        super().__init__(message)
        self.error_type = error_type


class Context:
    def __init__(self, headers, deadline_ms):
        env = os.environ
        self.function_name = env.get("AWS_LAMBDA_FUNCTION_NAME")
        self.function_version = env.get("AWS_LAMBDA_FUNCTION_VERSION")
        self.invoked_function_arn = headers.get("lambda-runtime-invoked-function-arn")
        self.memory_limit_in_mb = env.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
        self.aws_request_id = headers.get("lambda-runtime-aws-request-id")
        self.log_group_name = env.get("AWS_LAMBDA_LOG_GROUP_NAME")
        self.log_stream_name = env.get("AWS_LAMBDA_LOG_STREAM_NAME")
        self.identity = None
        self.client_context = None
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self):
        return max(0, int(self._deadline_ms - time.time() * 1000))


def main():
    try:
        handler = load_handler()
    except Exception as e:  # noqa: BLE001 - every init failure is reported, as AWS does
        error_type = getattr(e, "error_type", "Runtime.ImportModuleError")
        payload = {"errorMessage": str(e), "errorType": error_type, "requestId": "", "stackTrace": []}
        log_error(payload)
        fence("init")
        post_error("/2018-06-01/runtime/init/error", payload, error_type)
        sys.exit(1)
    while True:
        _, headers, body = request("GET", "/2018-06-01/runtime/invocation/next")
        request_id = headers.get("lambda-runtime-aws-request-id", "")
        deadline = int(headers.get("lambda-runtime-deadline-ms", "0"))
        os.environ["_X_AMZN_TRACE_ID"] = headers.get("lambda-runtime-trace-id", "")
        try:
            event = json.loads(body) if body else None
            result = handler(event, Context(headers, deadline))
            out = json.dumps(result).encode()
        except Exception as e:  # noqa: BLE001 - a handler's error is the invocation's result
            payload = error_payload(e, request_id)
            log_error(payload)
            fence(request_id)
            post_error(
                "/2018-06-01/runtime/invocation/%s/error" % request_id, payload, payload["errorType"]
            )
            continue
        fence(request_id)
        request(
            "POST",
            "/2018-06-01/runtime/invocation/%s/response" % request_id,
            out,
            {"Content-Type": "application/json"},
        )


if __name__ == "__main__":
    main()
