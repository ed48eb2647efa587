// Routes `https.request` / `https.get` aimed at cumulo's own host to plain http on cumulo's port.
// Also resolves `*.localhost` to loopback (see the end of the file).
//
// Why: a CloudFormation custom resource answers by PUTting to its ResponseURL, and the CDK's
// Provider framework (and other hand-written handlers) does so with `https.request({hostname,
// port: 443, ...})`, whatever the URL's scheme. cumulo serves plain http on one port, so such a
// request would otherwise fail. Only requests to the host names cumulo was reached by
// (CUMULO_ENDPOINT_HOSTS, comma-separated) are rerouted; everything else is untouched.
'use strict';

const http = require('http');
const https = require('https');

const hosts = new Set((process.env.CUMULO_ENDPOINT_HOSTS || '').split(',').filter(Boolean));
const port = Number(process.env.CUMULO_ENDPOINT_PORT || '4566');

// API Gateway's data plane at `<api-id>.execute-api.<cumulo host>` (a WebSocket API's
// @connections endpoint, which functions address as `https://${domainName}/${stage}`) is cumulo too.
function isCumulo(host) {
  const m = /^[^.]+\.execute-api\.(.+)$/.exec(host);
  return hosts.has(host) || (m !== null && hosts.has(m[1]));
}

function targetHost(options) {
  if (typeof options === 'string') return new URL(options).hostname;
  if (options instanceof URL) return options.hostname;
  if (options && typeof options === 'object') return options.hostname || (options.host || '').split(':')[0];
  return undefined;
}

function toHttp(args) {
  let [first, second, third] = args;
  let options;
  let callback;
  if (typeof first === 'string' || first instanceof URL) {
    const u = new URL(first.toString());
    options = { hostname: u.hostname, path: u.pathname + u.search, ...(typeof second === 'object' ? second : {}) };
    callback = typeof second === 'function' ? second : third;
  } else {
    options = { ...first };
    callback = second;
  }
  options.protocol = 'http:';
  options.port = port;
  delete options.host;
  delete options.agent;
  return [options, callback];
}

for (const name of ['request', 'get']) {
  const original = https[name];
  https[name] = function routed(...args) {
    const host = targetHost(args[0]);
    if (host && isCumulo(host)) {
      const [options, callback] = toHttp(args);
      return http[name](options, callback);
    }
    return original.apply(this, args);
  };
}

// Names under `localhost.` are loopback (RFC 6761). With AWS_ENDPOINT_URL=http://localhost:PORT
// the AWS SDK v3 addresses S3 virtual-hosted, as `<bucket>.localhost:PORT`; resolvers such as
// systemd-resolved answer those names, glibc's plain `files dns` does not (ENOTFOUND). A
// function's S3 calls must reach cumulo either way, so such names resolve as `localhost` here.
// Likewise the host prefixes the SDKs put before the endpoint's host for some operations
// (`sync-` for Step Functions' StartSyncExecution, `data-` for Cloud Map's DiscoverInstances):
// `sync-localhost` is one of cumulo's own names, so it resolves as the host it prefixes.
const dns = require('dns');
const lookup = dns.lookup;
const prefixed = /^(sync|data)-(.+)$/;
dns.lookup = function loopbackSubdomains(hostname, options, callback) {
  const name = typeof hostname === 'string' ? hostname.toLowerCase().replace(/\.$/, '') : '';
  const unprefixed = prefixed.test(name) && hosts.has(name.replace(prefixed, '$2'));
  const target = name.endsWith('.localhost') || unprefixed ? 'localhost' : hostname;
  return lookup.call(this, target, options, callback);
};
