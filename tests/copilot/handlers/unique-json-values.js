// unique-json-values.js (Custom::UniqueJSONValuesFunction): the sorted union of the aliases of the
// workloads FilterFor names, plus AdditionalStrings. Delete is a no-op.
exports.handler = (event, context) =>
  run(event, context, async () => {
    const physicalId = event.PhysicalResourceId || event.LogicalResourceId;
    if (event.RequestType === "Delete") return { physicalId };
    const p = event.ResourceProperties;
    const aliases = p.Aliases ? JSON.parse(p.Aliases) : {};
    const keep = (p.FilterFor || "").split(",").filter(Boolean);
    const values = new Set(p.AdditionalStrings || []);
    for (const w of keep) for (const a of aliases[w] || []) values.add(a);
    return { physicalId, data: { UniqueValues: [...values].sort() } };
  });
