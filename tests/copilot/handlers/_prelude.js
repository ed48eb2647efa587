// Shared by every handler below: the test builds each function's index.js as this prelude
// followed by one handler file, as Copilot's build bundles each handler with its helpers.
// The handlers are written for cumulo's tests from the account of Copilot's custom resources in
// ../shared/seeds/001 (what each Create, Update and Delete does, and what it makes out of band);
// they are not Copilot's code.
"use strict";
const https = require("https");
const { URL } = require("url");

// Answers CloudFormation as Copilot's handlers do: an https PUT on port 443 to the ResponseURL's
// host (cumulo's runtime routes it to the endpoint).
function report(event, context, status, physicalId, data, reason) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({
      Status: status,
      Reason: reason || `See the details in CloudWatch Log Stream: ${context.logStreamName}`,
      PhysicalResourceId: physicalId || context.logStreamName,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
      Data: data,
    });
    const u = new URL(event.ResponseURL);
    const req = https.request(
      {
        hostname: u.hostname,
        port: 443,
        path: u.pathname + u.search,
        method: "PUT",
        headers: { "Content-Type": "", "Content-Length": Buffer.byteLength(body) },
      },
      (res) => {
        res.on("data", () => {});
        res.on("end", resolve);
      }
    );
    req.on("error", reject);
    req.write(body);
    req.end();
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `check` until it answers true, at most `attempts` times `ms` apart.
async function waitFor(what, attempts, ms, check) {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await sleep(ms);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// Clients of another account's role (Copilot's app-account DNS delegation role).
async function roleCredentials(roleArn) {
  const { STSClient, AssumeRoleCommand } = require("@aws-sdk/client-sts");
  const out = await new STSClient({}).send(
    new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: "copilot-custom-resource" })
  );
  return {
    accessKeyId: out.Credentials.AccessKeyId,
    secretAccessKey: out.Credentials.SecretAccessKey,
    sessionToken: out.Credentials.SessionToken,
  };
}

async function route53(roleArn) {
  const { Route53Client } = require("@aws-sdk/client-route-53");
  return roleArn ? new Route53Client({ credentials: await roleCredentials(roleArn) }) : new Route53Client({});
}

// The hosted zone ListHostedZonesByName answers first for `name` (Copilot takes it without
// checking the name matches exactly).
async function zoneByName(r53, name) {
  const { ListHostedZonesByNameCommand } = require("@aws-sdk/client-route-53");
  const out = await r53.send(new ListHostedZonesByNameCommand({ DNSName: name, MaxItems: 1 }));
  if (!out.HostedZones || out.HostedZones.length === 0) throw new Error(`no hosted zone for ${name}`);
  return out.HostedZones[0].Id.split("/").pop();
}

async function changeRecords(r53, zoneId, changes, ignore) {
  const { ChangeResourceRecordSetsCommand, GetChangeCommand } = require("@aws-sdk/client-route-53");
  try {
    const out = await r53.send(
      new ChangeResourceRecordSetsCommand({ HostedZoneId: zoneId, ChangeBatch: { Changes: changes } })
    );
    await waitFor("the record change", 30, 1000, async () => {
      const c = await r53.send(new GetChangeCommand({ Id: out.ChangeInfo.Id }));
      return c.ChangeInfo.Status === "INSYNC";
    });
  } catch (e) {
    if (ignore && ignore.some((s) => String(e.message).includes(s))) return;
    throw e;
  }
}

// The zone a name belongs to: the environment's own zone (by id), else the app or root zone
// found by name through the app account's role.
function zoneFor(domain, env, app, root) {
  const d = domain.replace(/\.$/, "");
  if (d === `${env}.${app}.${root}` || d.endsWith(`.${env}.${app}.${root}`)) return "env";
  if (d === `${app}.${root}` || d.endsWith(`.${app}.${root}`)) return "app";
  if (d === root || d.endsWith(`.${root}`)) return "root";
  return "other";
}

// Runs one custom-resource request: `work` answers {physicalId, data}; failures are FAILED with
// the error's message, as Copilot's handlers report them.
async function run(event, context, work) {
  console.log(JSON.stringify({ RequestType: event.RequestType, LogicalResourceId: event.LogicalResourceId }));
  try {
    const out = (await work()) || {};
    await report(event, context, "SUCCESS", out.physicalId || event.PhysicalResourceId, out.data);
  } catch (e) {
    console.log(`FAILED: ${e.stack || e}`);
    await report(event, context, "FAILED", event.PhysicalResourceId || event.LogicalResourceId, undefined, String(e.message || e));
  }
}
