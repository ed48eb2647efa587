// Certificate helpers shared by the certificate handlers (prepended after the prelude).
const acm = require("@aws-sdk/client-acm");

function acmClient(region) {
  return new acm.ACMClient(region ? { region } : {});
}

async function describeCert(client, arn) {
  return (await client.send(new acm.DescribeCertificateCommand({ CertificateArn: arn }))).Certificate;
}

// Waits until every domain's validation record is known, and answers the options.
async function validationOptions(client, arn) {
  let options;
  await waitFor("the certificate's validation records", 60, 1000, async () => {
    options = (await describeCert(client, arn)).DomainValidationOptions || [];
    return options.length > 0 && options.every((o) => o.ResourceRecord);
  });
  return options;
}

async function waitValidated(client, arn, attempts) {
  await waitFor("the certificate's validation", attempts || 570, 1000, async () => {
    const c = await describeCert(client, arn);
    if (c.Status === "FAILED") throw new Error(`certificate ${arn} failed validation`);
    return c.Status === "ISSUED";
  });
}

async function waitUnused(client, arn, attempts, ms) {
  await waitFor(`certificate ${arn} to be unused`, attempts, ms, async () => {
    const c = await describeCert(client, arn);
    return !(c.InUseBy && c.InUseBy.length);
  });
}

async function deleteCert(client, arn) {
  try {
    await client.send(new acm.DeleteCertificateCommand({ CertificateArn: arn }));
  } catch (e) {
    if (e.name !== "ResourceNotFoundException") throw e;
  }
}
