// dns-delegation.js (Custom::DNSDelegationFunction, env): through the app account's DNS role,
// UPSERTs the NS record SubdomainName in the app zone with the environment zone's name servers;
// Delete removes it when it is the first record at that name and type.
exports.domainDelegationHandler = (event, context) =>
  run(event, context, async () => {
    const p = event.ResourceProperties;
    const r53 = await route53(p.RootDNSRole);
    const zone = await zoneByName(r53, p.DomainName);
    const name = p.SubdomainName;
    if (event.RequestType === "Delete") {
      const { ListResourceRecordSetsCommand } = require("@aws-sdk/client-route-53");
      const out = await r53.send(
        new ListResourceRecordSetsCommand({ HostedZoneId: zone, StartRecordName: name, StartRecordType: "NS", MaxItems: 1 })
      );
      const first = (out.ResourceRecordSets || [])[0];
      if (first && first.Name === `${name}.` && first.Type === "NS") {
        await changeRecords(r53, zone, [{ Action: "DELETE", ResourceRecordSet: first }]);
      }
      return { physicalId: name };
    }
    await changeRecords(r53, zone, [
      {
        Action: "UPSERT",
        ResourceRecordSet: {
          Name: name,
          Type: "NS",
          TTL: 60,
          ResourceRecords: p.NameServers.map((ns) => ({ Value: ns })),
        },
      },
    ]);
    return { physicalId: name };
  });
