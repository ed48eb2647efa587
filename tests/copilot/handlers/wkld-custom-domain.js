// wkld-custom-domain.js (Custom::NLBCustomDomainFunction; the Static Site's
// Custom::CustomDomainFunction): refuses an alias whose A record points elsewhere, UPSERTs an A
// alias record to the NLB (or CloudFront) per alias, removes dropped aliases on Update, and on
// Delete removes every alias record still pointing at this target.
async function zoneOf(p, alias) {
  const where = zoneFor(alias, p.EnvName, p.AppName, p.DomainName);
  if (where === "other") throw new Error(`alias ${alias} is not in the env, app or root zone`);
  const r53 = await route53(where === "env" ? undefined : p.RootDNSRole);
  const zone =
    where === "env" ? p.EnvHostedZoneId : await zoneByName(r53, where === "app" ? `${p.AppName}.${p.DomainName}` : p.DomainName);
  return { r53, zone };
}

function record(p, alias) {
  return {
    Name: alias,
    Type: "A",
    AliasTarget: { DNSName: p.PublicAccessDNS, HostedZoneId: p.PublicAccessHostedZoneID, EvaluateTargetHealth: true },
  };
}

async function checkAlias(p, alias) {
  const { ListResourceRecordSetsCommand } = require("@aws-sdk/client-route-53");
  const { r53, zone } = await zoneOf(p, alias);
  const out = await r53.send(
    new ListResourceRecordSetsCommand({ HostedZoneId: zone, StartRecordName: alias, StartRecordType: "A", MaxItems: 1 })
  );
  const r = (out.ResourceRecordSets || [])[0];
  const name = alias.replace(/\.$/, "") + ".";
  if (r && r.Name.replace(/\\052/g, "*") === name && r.Type === "A") {
    const target = r.AliasTarget ? r.AliasTarget.DNSName.replace(/\.$/, "").toLowerCase() : "";
    if (target !== p.PublicAccessDNS.replace(/\.$/, "").toLowerCase()) throw new Error(`alias ${alias} is already in use`);
  }
}

exports.handler = (event, context) =>
  run(event, context, async () => {
    const p = event.ResourceProperties;
    const physicalId = event.LogicalResourceId;
    const aliases = p.Aliases || [];
    if (event.RequestType === "Delete") {
      for (const a of aliases) {
        const { r53, zone } = await zoneOf(p, a);
        await changeRecords(r53, zone, [{ Action: "DELETE", ResourceRecordSet: record(p, a) }], [
          "not found",
          "values provided do not match",
        ]);
      }
      return { physicalId };
    }
    const old = event.OldResourceProperties;
    if (
      old &&
      JSON.stringify(old.Aliases) === JSON.stringify(p.Aliases) &&
      old.PublicAccessDNS === p.PublicAccessDNS &&
      old.PublicAccessHostedZoneID === p.PublicAccessHostedZoneID
    )
      return { physicalId };
    for (const a of aliases) await checkAlias(p, a);
    for (const a of aliases) {
      const { r53, zone } = await zoneOf(p, a);
      await changeRecords(r53, zone, [{ Action: "UPSERT", ResourceRecordSet: record(p, a) }]);
    }
    if (old)
      for (const a of old.Aliases || [])
        if (!aliases.includes(a)) {
          const { r53, zone } = await zoneOf(old, a);
          await changeRecords(r53, zone, [{ Action: "DELETE", ResourceRecordSet: record(old, a) }], ["not found"]);
        }
    return { physicalId };
  });
