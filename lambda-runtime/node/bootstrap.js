// cumulo's Node.js runtime shim: the loop AWS's Node.js runtime runs, against cumulo's Lambda
// Runtime API (AWS_LAMBDA_RUNTIME_API), with the machine's `node`. No Docker, no downloads.
//
// What it provides beyond the loop, as AWS's runtime does:
// - console.* lines prefixed `<time>\t<request id>\t<LEVEL>\t`, stderr folded into stdout; with
//   the JSON log format (AWS_LAMBDA_LOG_FORMAT=JSON) one JSON object per call instead, and calls
//   below AWS_LAMBDA_LOG_LEVEL dropped;
// - `cfn-response` resolvable (NODE_PATH carries lambda-runtime/node/node_modules);
// - the AWS SDK v3 (`@aws-sdk/*`), which AWS preinstalls: resolved from cumulo's SDK cache
//   directory (CUMULO_NODE_SDK_DIR); a missing client is installed there with `npm install` on
//   first use unless CUMULO_NODE_SDK_INSTALL=0, and otherwise fails with a message saying how;
// - `https.request` to cumulo's own host is sent as plain http to cumulo's port (see
//   https-to-cumulo.js): the CDK's custom resource framework answers its ResponseURL over https
//   on port 443.
'use strict';

const http = require('http');
const path = require('path');
const fs = require('fs');
const Module = require('module');
const { execFileSync } = require('child_process');
const { pathToFileURL } = require('url');

require('./https-to-cumulo.js');

const API = process.env.AWS_LAMBDA_RUNTIME_API;
const FENCE = '\u001ecumulo-fence ';
let currentRequestId = undefined;

// Every log line goes to stdout in order, so cumulo can attribute it to the invocation.
const out = (s) => process.stdout.write(s);
const LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];
const JSON_LOGS = process.env.AWS_LAMBDA_LOG_FORMAT === 'JSON';
const MIN_LEVEL = JSON_LOGS ? Math.max(0, LEVELS.indexOf(process.env.AWS_LAMBDA_LOG_LEVEL || 'INFO')) : 0;
function logLine(level, args) {
  if (LEVELS.indexOf(level) < MIN_LEVEL) return;
  const text = require('util').format(...args);
  const timestamp = new Date().toISOString();
  if (JSON_LOGS) {
    out(JSON.stringify({ timestamp, level, requestId: currentRequestId, message: text }) + '\n');
    return;
  }
  const rid = currentRequestId === undefined ? 'undefined' : currentRequestId;
  out(`${timestamp}\t${rid}\t${level}\t${text.replace(/\n/g, '\r')}\n`);
}
console.log = (...a) => logLine('INFO', a);
console.info = (...a) => logLine('INFO', a);
console.warn = (...a) => logLine('WARN', a);
console.error = (...a) => logLine('ERROR', a);
console.debug = (...a) => logLine('DEBUG', a);
console.trace = (...a) => logLine('TRACE', a);
console.fatal = (...a) => logLine('FATAL', a);
process.stderr.write = process.stdout.write.bind(process.stdout);

installSdkResolver();

function request(method, urlPath, body, headers) {
  return new Promise((resolve, reject) => {
    const [host, port] = API.split(':');
    const req = http.request(
      { host, port, path: urlPath, method, headers: headers || {} },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function errorPayload(err) {
  if (err instanceof Error) {
    const stack = typeof err.stack === 'string' ? err.stack.split('\n') : [];
    return { errorType: err.name || 'Error', errorMessage: err.message, trace: stack };
  }
  // A thrown non-Error, as AWS reports it.
  const message = typeof err === 'string' ? err : JSON.stringify(err);
  return { errorType: typeof err === 'string' ? 'string' : 'object', errorMessage: message, trace: [] };
}

async function postError(urlPath, err, type) {
  const p = errorPayload(err);
  const errorType = type || p.errorType;
  const body = JSON.stringify({ errorType, errorMessage: p.errorMessage, trace: p.trace });
  await request('POST', urlPath, body, {
    'Content-Type': 'application/json',
    'Lambda-Runtime-Function-Error-Type': errorType,
  });
  return { ...p, errorType };
}

function logError(requestId, p) {
  out(`${new Date().toISOString()}\t${requestId}\tERROR\tInvoke Error \t${JSON.stringify({ errorType: p.errorType, errorMessage: p.errorMessage, stack: p.trace })}\n`);
}

async function loadHandler() {
  const taskRoot = process.env.LAMBDA_TASK_ROOT;
  const spec = process.env._HANDLER || '';
  const dot = spec.lastIndexOf('.');
  if (dot < 1) {
    const e = new Error(`Bad handler ${spec}: missing module or function name`);
    e.name = 'Runtime.MalformedHandlerName';
    throw e;
  }
  const modulePath = spec.slice(0, dot);
  const fnPath = spec.slice(dot + 1).split('.');
  const base = path.resolve(taskRoot, modulePath);
  let mod;
  const candidates = ['.js', '.mjs', '.cjs'].map((ext) => base + ext).filter((f) => fs.existsSync(f));
  if (candidates.length === 0) {
    const e = new Error(`Cannot find module '${modulePath}'\nRequire stack:\n- ${__filename}`);
    e.name = 'Runtime.ImportModuleError';
    throw e;
  }
  const file = candidates[0];
  try {
    if (file.endsWith('.mjs')) {
      mod = await import(pathToFileURL(file).href);
    } else {
      try {
        mod = require(file);
      } catch (e) {
        if (e && e.code === 'ERR_REQUIRE_ESM') {
          mod = await import(pathToFileURL(file).href);
        } else {
          throw e;
        }
      }
    }
  } catch (e) {
    if (e instanceof SyntaxError) {
      e.name = 'Runtime.UserCodeSyntaxError';
    } else if (e && e.code === 'MODULE_NOT_FOUND') {
      e.name = 'Runtime.ImportModuleError';
    }
    throw e;
  }
  let fn = mod;
  for (const part of fnPath) {
    fn = fn == null ? undefined : fn[part];
  }
  if (fn === undefined && mod && mod.default) {
    fn = fnPath.reduce((o, p) => (o == null ? undefined : o[p]), mod.default);
  }
  if (typeof fn !== 'function') {
    const e = new Error(`${modulePath}.${fnPath.join('.')} is undefined or not exported`);
    e.name = 'Runtime.HandlerNotFound';
    throw e;
  }
  return fn;
}

function makeContext(headers, deadline) {
  const env = process.env;
  const ctx = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: headers['lambda-runtime-invoked-function-arn'],
    memoryLimitInMB: env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: headers['lambda-runtime-aws-request-id'],
    logGroupName: env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  if (headers['lambda-runtime-client-context']) {
    try { ctx.clientContext = JSON.parse(headers['lambda-runtime-client-context']); } catch (_) { /* as AWS: ignored */ }
  }
  return ctx;
}

function runHandler(handler, event, context) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err, value) => {
      if (settled) return;
      settled = true;
      if (err !== undefined && err !== null) reject(err); else resolve(value);
    };
    context.done = finish;
    context.succeed = (v) => finish(null, v);
    context.fail = (e) => finish(e === undefined || e === null ? new Error('handled') : e);
    try {
      const r = handler(event, context, finish);
      if (r && typeof r.then === 'function') r.then((v) => finish(null, v), (e) => finish(e === undefined ? new Error('undefined') : e));
    } catch (e) {
      finish(e);
    }
  });
}

async function main() {
  let handler;
  try {
    handler = await loadHandler();
  } catch (e) {
    const p = await postError('/2018-06-01/runtime/init/error', e, e && e.name);
    logError(undefined, p);
    out(`${FENCE}init\n`);
    process.exit(1);
  }
  for (;;) {
    const next = await request('GET', '/2018-06-01/runtime/invocation/next');
    const id = next.headers['lambda-runtime-aws-request-id'];
    const deadline = Number(next.headers['lambda-runtime-deadline-ms']);
    currentRequestId = id;
    process.env._X_AMZN_TRACE_ID = next.headers['lambda-runtime-trace-id'] || '';
    let event;
    try {
      event = JSON.parse(next.body.toString('utf8'));
    } catch (e) {
      event = next.body.toString('utf8');
    }
    const context = makeContext(next.headers, deadline);
    try {
      const result = await runHandler(handler, event, context);
      const body = result === undefined ? 'null' : JSON.stringify(result);
      out(`${FENCE}${id}\n`);
      await request('POST', `/2018-06-01/runtime/invocation/${id}/response`, body, { 'Content-Type': 'application/json' });
    } catch (e) {
      const p = errorPayload(e);
      logError(id, p);
      out(`${FENCE}${id}\n`);
      await postError(`/2018-06-01/runtime/invocation/${id}/error`, e);
    }
    currentRequestId = undefined;
  }
}

// --- the AWS SDK v3 -------------------------------------------------------------------------

function sdkPackage(request) {
  const parts = request.split('/');
  return parts.length >= 2 ? `${parts[0]}/${parts[1]}` : request;
}

function installSdkResolver() {
  const dir = process.env.CUMULO_NODE_SDK_DIR;
  const original = Module._resolveFilename;
  Module._resolveFilename = function resolve(request, parent, isMain, options) {
    try {
      return original.call(this, request, parent, isMain, options);
    } catch (e) {
      const sdk = typeof request === 'string' && (request.startsWith('@aws-sdk/') || request.startsWith('@smithy/'));
      if (!sdk || !e || e.code !== 'MODULE_NOT_FOUND' || !dir) throw e;
      const pkg = sdkPackage(request);
      if (process.env.CUMULO_NODE_SDK_INSTALL === '0') {
        throw new Error(`cumulo: ${pkg} (part of the AWS SDK v3 that AWS's Node.js runtime preinstalls) is not installed for local functions: run \`npm install --prefix ${dir} ${pkg}\`, or unset CUMULO_NODE_SDK_INSTALL=0 to let cumulo install it on first use`);
      }
      try {
        fs.mkdirSync(dir, { recursive: true });
        withInstallLock(dir, () => {
          // Another function may have installed it while this one waited for the lock.
          if (fs.existsSync(path.join(dir, 'node_modules', pkg, 'package.json'))) return;
          out(`${new Date().toISOString()}\t${currentRequestId}\tINFO\tcumulo: installing ${pkg} into ${dir} (the AWS SDK v3 that AWS's Node.js runtime preinstalls)\n`);
          execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefix', dir, pkg], { stdio: ['ignore', 'ignore', 'pipe'] });
        });
      } catch (err) {
        const detail = err && err.stderr ? err.stderr.toString().trim().split('\n').slice(-3).join(' ') : String(err);
        throw new Error(`cumulo: ${pkg} (the AWS SDK v3 that AWS's Node.js runtime preinstalls) could not be installed into ${dir}: ${detail}`);
      }
      try {
        return original.call(this, request, parent, isMain, options);
      } catch (again) {
        // Node remembers the package.json it did not find a moment ago (its package.json
        // cache keeps misses), so the first lookup's miss outlives the install whenever the
        // SDK directory already held other clients: resolve the fresh package from disk.
        const file = installedEntry(dir, pkg, request);
        if (file === undefined) throw again;
        return file;
      }
    }
  };
}

// Runs `fn` holding the SDK directory's install lock: two functions starting at once (the CDK's
// Provider framework and AwsCustomResource in one deploy) must not run npm on one directory
// together, which corrupts it. The lock file holds its owner's pid, so a lock left by a killed
// process (a timed-out invocation) is taken over rather than waited on forever.
function withInstallLock(dir, fn) {
  const lock = path.join(dir, '.cumulo-install.lock');
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    let owner = NaN;
    try {
      owner = Number(fs.readFileSync(lock, 'utf8'));
    } catch {
      continue; // released between our attempt and the read
    }
    if (owner > 0 && !alive(owner)) {
      fs.rmSync(lock, { force: true });
      continue;
    }
    Atomics.wait(pause, 0, 0, 100); // a synchronous pause: require() cannot await
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

// The file `request` names inside package `pkg` just installed under `dir`: the package's
// CommonJS entry (`exports["."]`'s require/node/default, else `main`, else index.js) or the
// subpath's file.
function installedEntry(dir, pkg, request) {
  const root = path.join(dir, 'node_modules', pkg);
  const sub = request.slice(pkg.length).replace(/^\//, '');
  let candidates;
  if (sub) {
    candidates = [path.join(root, sub), path.join(root, `${sub}.js`), path.join(root, sub, 'index.js')];
  } else {
    let manifest;
    try {
      manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    } catch {
      return undefined;
    }
    const dot = manifest.exports && (typeof manifest.exports === 'string' ? manifest.exports : manifest.exports['.']);
    const pick = (e) => (typeof e === 'string' ? e : e && (pick(e.require) || pick(e.node) || pick(e.default)));
    const entry = pick(dot) || manifest.main || 'index.js';
    candidates = [path.join(root, entry), path.join(root, `${entry}.js`), path.join(root, entry, 'index.js')];
  }
  return candidates.find((f) => fs.existsSync(f) && fs.statSync(f).isFile());
}

main().catch((e) => {
  out(`cumulo runtime failure: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
