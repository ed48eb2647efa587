// custom-domain.js (Custom::CustomDomainFunction, env CustomDomainAction): an A alias record to
// the public load balancer (or CloudFront) for every alias in the env, app or root zone; Update
// also removes aliases no longer present; Delete removes them all.
function aliasesOf(p) {
  const map = p.Aliases ? JSON.parse(p.Aliases) : {};
  return [...new Set(Object.values(map).flat())];
}

async function aliasChange(p, alias, action) {
  const where = zoneFor(alias, p.EnvName, p.AppName, p.DomainName);
  if (where === "other") return;
  const r53 = await route53(where === "env" ? undefined : p.AppDNSRole);
  const zoneName =
    where === "env" ? `${p.EnvName}.${p.AppName}.${p.DomainName}` : where === "app" ? `${p.AppName}.${p.DomainName}` : p.DomainName;
  const zone = await zoneByName(r53, zoneName);
  await changeRecords(
    r53,
    zone,
    [
      {
        Action: action,
        ResourceRecordSet: {
          Name: alias,
          Type: "A",
          AliasTarget: { DNSName: p.PublicAccessDNS, HostedZoneId: p.PublicAccessHostedZone, EvaluateTargetHealth: true },
        },
      },
    ],
    action === "DELETE" ? ["not found"] : undefined
  );
}

exports.handler = (event, context) =>
  run(event, context, async () => {
    const p = event.ResourceProperties;
    const physicalId = event.LogicalResourceId;
    const current = aliasesOf(p);
    if (event.RequestType === "Delete") {
      for (const a of current) await aliasChange(p, a, "DELETE");
      return { physicalId };
    }
    for (const a of current) await aliasChange(p, a, "UPSERT");
    if (event.RequestType === "Update") {
      const old = event.OldResourceProperties || {};
      for (const a of aliasesOf(old)) if (!current.includes(a)) await aliasChange(old, a, "DELETE");
    }
    return { physicalId };
  });
