// wkld-cert-validator.js (Custom::NLBCertValidatorFunction; the Static Site's
// Custom::CertificateValidationFunction): requests a certificate for the service's aliases
// (<svc>-nlb.<env>.<app>.<domain>, or <svc>.<env>.<app>.<domain> in us-east-1 for CloudFront)
// tagged with the app, env and service, writes its validation CNAMEs and waits for ISSUED. Update
// does nothing unless the aliases changed. Delete removes its validation records and, once the
// certificate is unused, the certificate.
function sameAliases(a, b) {
  return JSON.stringify([...(a || [])].sort()) === JSON.stringify([...(b || [])].sort());
}

function region(p) {
  return p.IsCloudFrontCertificate === "true" || p.IsCloudFrontCertificate === true ? "us-east-1" : undefined;
}

async function validationChanges(p, options, action) {
  for (const o of options) {
    const r = o.ResourceRecord;
    const where = zoneFor(o.DomainName.replace(/^\*\./, ""), p.EnvName, p.AppName, p.DomainName);
    if (where === "other") continue;
    const r53 = await route53(where === "env" ? undefined : p.RootDNSRole);
    const zone =
      where === "env" ? p.EnvHostedZoneId : await zoneByName(r53, where === "app" ? `${p.AppName}.${p.DomainName}` : p.DomainName);
    await changeRecords(
      r53,
      zone,
      [{ Action: action, ResourceRecordSet: { Name: r.Name, Type: r.Type, TTL: 60, ResourceRecords: [{ Value: r.Value }] } }],
      action === "DELETE" ? ["not found"] : undefined
    );
  }
}

async function requestAndValidate(p) {
  const client = acmClient(region(p));
  const cloudFront = region(p) === "us-east-1";
  const domain = `${p.ServiceName}${cloudFront ? "" : "-nlb"}.${p.EnvName}.${p.AppName}.${p.DomainName}`;
  const token = require("crypto")
    .createHash("md5")
    .update(`/${p.ServiceName}/${[...(p.Aliases || [])].sort().join(",")}`)
    .digest("hex");
  const out = await client.send(
    new acm.RequestCertificateCommand({
      DomainName: domain,
      SubjectAlternativeNames: p.Aliases,
      ValidationMethod: "DNS",
      IdempotencyToken: token.slice(0, 32),
      Tags: [
        { Key: "copilot-application", Value: p.AppName },
        { Key: "copilot-environment", Value: p.EnvName },
        { Key: "copilot-service", Value: p.ServiceName },
      ],
    })
  );
  await validationChanges(p, await validationOptions(client, out.CertificateArn), "UPSERT");
  await waitValidated(client, out.CertificateArn);
  return out.CertificateArn;
}

exports.handler = (event, context) =>
  run(event, context, async () => {
    const p = event.ResourceProperties;
    if (event.RequestType === "Create") return { physicalId: await requestAndValidate(p) };
    if (event.RequestType === "Update") {
      if (sameAliases((event.OldResourceProperties || {}).Aliases, p.Aliases)) return { physicalId: event.PhysicalResourceId };
      return { physicalId: await requestAndValidate(p) };
    }
    const arn = event.PhysicalResourceId;
    if (!arn.startsWith("arn:")) return { physicalId: arn };
    const client = acmClient(region(p));
    const cert = await describeCert(client, arn);
    await validationChanges(p, (cert.DomainValidationOptions || []).filter((o) => o.ResourceRecord), "DELETE");
    await waitUnused(client, arn, 12, 3000);
    await deleteCert(client, arn);
    return { physicalId: arn };
  });
