// dns-cert-validator.js (Custom::CertificateValidationFunction, env HTTPSCert): requests the
// environment's certificate (env.app.domain, its wildcard and the aliases in the env, app or root
// zone), writes the validation CNAMEs (env zone by id; app and root zones through the app DNS
// role), waits for ISSUED. Update requests a new certificate only when the aliases changed. Delete
// waits until unused, deletes the validation records no newer certificate shares, then the
// certificate.
function aliasesOf(p) {
  const map = p.Aliases ? JSON.parse(p.Aliases) : {};
  return [...new Set(Object.values(map).flat())].sort();
}

async function recordChanges(p, options, action) {
  const byZone = {};
  const seen = new Set();
  for (const o of options) {
    const r = o.ResourceRecord;
    const key = `${r.Name}|${r.Value}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const where = zoneFor(o.DomainName.replace(/^\*\./, ""), p.EnvName, p.AppName, p.DomainName);
    if (where === "other") continue;
    (byZone[where] = byZone[where] || []).push({
      Action: action,
      ResourceRecordSet: { Name: r.Name, Type: r.Type, TTL: 60, ResourceRecords: [{ Value: r.Value }] },
    });
  }
  for (const [where, changes] of Object.entries(byZone)) {
    const r53 = await route53(where === "env" ? undefined : p.RootDNSRole);
    const zone =
      where === "env"
        ? p.EnvHostedZoneId
        : await zoneByName(r53, where === "app" ? `${p.AppName}.${p.DomainName}` : p.DomainName);
    await changeRecords(r53, zone, changes, action === "DELETE" ? ["not found"] : undefined);
  }
}

async function requestAndValidate(p) {
  const client = acmClient(p.Region);
  const domain = `${p.EnvName}.${p.AppName}.${p.DomainName}`;
  const sans = [domain, `*.${domain}`, ...aliasesOf(p).filter((a) => zoneFor(a, p.EnvName, p.AppName, p.DomainName) !== "other")];
  const out = await client.send(
    new acm.RequestCertificateCommand({
      DomainName: domain,
      SubjectAlternativeNames: [...new Set(sans)],
      ValidationMethod: "DNS",
      Tags: [
        { Key: "copilot-application", Value: p.AppName },
        { Key: "copilot-environment", Value: p.EnvName },
      ],
    })
  );
  const arn = out.CertificateArn;
  await recordChanges(p, await validationOptions(client, arn), "UPSERT");
  await waitValidated(client, arn);
  return arn;
}

exports.certificateRequestHandler = (event, context) =>
  run(event, context, async () => {
    const p = event.ResourceProperties;
    if (event.RequestType === "Create") return { physicalId: await requestAndValidate(p) };
    if (event.RequestType === "Update") {
      const old = event.OldResourceProperties || {};
      if (JSON.stringify(aliasesOf(old)) === JSON.stringify(aliasesOf(p))) return { physicalId: event.PhysicalResourceId };
      return { physicalId: await requestAndValidate(p) };
    }
    const arn = event.PhysicalResourceId;
    if (!arn.startsWith("arn:")) return { physicalId: arn };
    const client = acmClient(p.Region);
    await waitUnused(client, arn, 10, 3000);
    const cert = await describeCert(client, arn);
    // Records a newer certificate of the same domain still needs stay.
    const list = await client.send(new acm.ListCertificatesCommand({}));
    const newer = (list.CertificateSummaryList || []).find(
      (c) => c.DomainName === cert.DomainName && c.CertificateArn !== arn
    );
    const keep = new Set(newer ? (await describeCert(client, newer.CertificateArn)).SubjectAlternativeNames : []);
    const options = (cert.DomainValidationOptions || []).filter((o) => o.ResourceRecord && !keep.has(o.DomainName));
    await recordChanges(p, options, "DELETE");
    await deleteCert(client, arn);
    return { physicalId: arn };
  });
