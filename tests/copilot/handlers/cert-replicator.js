// cert-replicator.js (Custom::CertificateReplicatorFunction, env with a CDN): requests a copy of
// the environment's certificate in TargetRegion (us-east-1, for CloudFront) and waits until the
// existing validation records validate it. Every Update requests a new one. Delete waits until
// unused, then deletes the copy.
exports.certificateReplicateHandler = (event, context) =>
  run(event, context, async () => {
    const p = event.ResourceProperties;
    const target = acmClient(p.TargetRegion);
    if (event.RequestType === "Delete") {
      const arn = event.PhysicalResourceId;
      if (!arn.startsWith("arn:")) return { physicalId: arn };
      await waitUnused(target, arn, 10, 3000);
      await deleteCert(target, arn);
      return { physicalId: arn };
    }
    const source = await describeCert(acmClient(p.EnvRegion), p.CertificateArn);
    const tags = [{ Key: "copilot-application", Value: p.AppName || "" }, { Key: "copilot-environment", Value: p.EnvName || "" }];
    const out = await target.send(
      new acm.RequestCertificateCommand({
        DomainName: source.DomainName,
        SubjectAlternativeNames: source.SubjectAlternativeNames,
        ValidationMethod: "DNS",
        Tags: tags.filter((t) => t.Value),
      })
    );
    await waitValidated(target, out.CertificateArn);
    return { physicalId: out.CertificateArn, data: { Arn: out.CertificateArn } };
  });
