//! CloudFormation providers for Route 53, each a [`Declared`] mapping onto the typed
//! operations:
//! - AWS::Route53::HostedZone: Ref and GetAtt Id are the bare zone id, GetAtt NameServers the
//!   four name servers; HostedZoneConfig's comment, VPCs, HostedZoneTags and the
//!   QueryLoggingConfig's log group (stored) change in place.
//! - AWS::Route53::RecordSet: a CREATE (so an existing set fails it, as on AWS), an UPSERT (or
//!   DELETE + CREATE when the type or set identifier changes) on update, a DELETE of the live
//!   set on delete. Ref (and GetAtt Id) is the record's name as the template gives it.
//! - AWS::Route53::RecordSetGroup: every set in one batch; an update deletes the sets the
//!   template dropped and upserts the others in one batch. Ref is a generated name.
//! - AWS::Route53::HealthCheck: Ref and GetAtt HealthCheckId are the check's id.
//! - AWS::Route53::DNSSEC and AWS::Route53::KeySigningKey are refused by name: cumulo signs
//!   no zone.

use super::Route53Service;
use super::names::normalize_name;
use super::records::{RecordChange, record_from_api};
use super::state::RecordSet;
use crate::providers::declared::{self, Answer, Declared, Fault, Made, refuse_other_changes};
use crate::providers::system_tags::system_tags;
use crate::providers::{ProviderServices, list, required, scalar, scalar_value};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SERVICE: &str = "Route53";
const NOT_FOUND: &[&str] = &["NoSuchHostedZone", "NoSuchHealthCheck"];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let dns = || s.route53.clone();
    declared::register(r, Zone(dns()));
    declared::register(r, Record(dns()));
    declared::register(r, RecordGroup(dns()));
    declared::register(r, Check(dns()));
    declared::register(r, Unsigned::<false>);
    declared::register(r, Unsigned::<true>);
}

fn invalid(message: String) -> ProviderError {
    ProviderError::Failed(format!(
        "Properties validation failed for resource with message: {message}"
    ))
}

fn object_of<'a>(v: &'a Value, key: &str) -> Result<&'a Map<String, Value>, ProviderError> {
    v.as_object()
        .ok_or_else(|| invalid(format!("#/{key}: expected type: JSONObject")))
}

/// `[{Key, Value}]` under `key`, then the stack's and CloudFormation's own tags.
fn tag_list(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
    key: &str,
) -> Result<Vec<(String, String)>, ProviderError> {
    let mut out = Vec::new();
    for t in list(props, key)? {
        let o = object_of(t, key)?;
        out.push((required(o, "Key")?, scalar(o, "Value")?.unwrap_or_default()));
    }
    if cumulo_engine::tagging(&ctx.resource_type).taggable() {
        for (k, v) in &ctx.stack_tags {
            if !out.iter().any(|(key, _)| key == k) {
                out.push((k.clone(), v.clone()));
            }
        }
    }
    out.extend(system_tags(ctx));
    Ok(out)
}

/// A caller reference unique to this resource's creation.
fn caller_reference(ctx: &ProviderContext) -> String {
    format!("{}-{}", ctx.logical_id, uuid::Uuid::new_v4())
}

// ---- AWS::Route53::HostedZone ----

struct Zone(Arc<Route53Service>);

fn vpcs(props: &Map<String, Value>) -> Result<Vec<(String, String)>, ProviderError> {
    list(props, "VPCs")?
        .iter()
        .map(|v| {
            let o = object_of(v, "VPCs")?;
            Ok((required(o, "VPCRegion")?, required(o, "VPCId")?))
        })
        .collect()
}

fn comment(props: &Map<String, Value>) -> Result<String, ProviderError> {
    Ok(match props.get("HostedZoneConfig") {
        Some(c) => scalar(object_of(c, "HostedZoneConfig")?, "Comment")?.unwrap_or_default(),
        None => String::new(),
    })
}

fn log_group(props: &Map<String, Value>) -> Result<Option<String>, ProviderError> {
    match props.get("QueryLoggingConfig") {
        Some(c) => Ok(Some(required(
            object_of(c, "QueryLoggingConfig")?,
            "CloudWatchLogsLogGroupArn",
        )?)),
        None => Ok(None),
    }
}

impl Zone {
    fn made(&self, id: &str) -> Answer<Made> {
        let z = self.0.zone(id)?;
        // AWS reports no name servers for a private zone.
        let servers: Vec<Value> = if z.private {
            Vec::new()
        } else {
            z.name_servers.iter().map(|s| json!(s)).collect()
        };
        Ok(Made::new(&z.id)
            .with("Id", z.id.clone())
            .with("NameServers", Value::Array(servers)))
    }

    /// Brings comment, tags, logging and VPC associations to what the template says.
    fn apply(&self, ctx: &ProviderContext, id: &str, props: &Map<String, Value>) -> Answer<()> {
        self.0.set_zone_comment(id, &comment(props)?)?;
        self.0
            .set_zone_tags(id, &tag_list(ctx, props, "HostedZoneTags")?)?;
        self.0.set_query_logging(id, log_group(props)?.as_deref())?;
        let want = vpcs(props)?;
        let zone = self.0.zone(id)?;
        for (region, vpc) in &want {
            if !zone.vpcs.iter().any(|(r, v)| r == region && v == vpc) {
                self.0.associate_vpc(id, region, vpc)?;
            }
        }
        for (region, vpc) in &zone.vpcs {
            if !want.iter().any(|(r, v)| r == region && v == vpc) {
                self.0.disassociate_vpc(id, region, vpc)?;
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Declared for Zone {
    const ATTRIBUTES: &'static [&'static str] = &["Id", "NameServers"];
    const TYPE: &'static str = "AWS::Route53::HostedZone";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "Name",
        "HostedZoneConfig",
        "HostedZoneTags",
        "VPCs",
        "QueryLoggingConfig",
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = required(props, "Name")?;
        let vpcs = vpcs(props)?;
        let zone = self.0.create_zone(super::NewZone {
            name: &name,
            caller_reference: &caller_reference(ctx),
            comment: &comment(props)?,
            vpc: vpcs.first().map(|(r, v)| (r.as_str(), v.as_str())),
        })?;
        if let Err(e) = self.apply(ctx, &zone.id, props) {
            let _ = self.0.delete_zone(&zone.id);
            return Err(e);
        }
        self.made(&zone.id)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(
            Self::TYPE,
            old,
            new,
            &[
                "HostedZoneConfig",
                "HostedZoneTags",
                "VPCs",
                "QueryLoggingConfig",
            ],
        )?;
        if vpcs(old)?.is_empty() != vpcs(new)?.is_empty() {
            return Err(crate::providers::unsupported_prop(
                Self::TYPE,
                "VPCs",
                "a public zone cannot become private or a private one public",
            )
            .into());
        }
        self.apply(ctx, id, new)?;
        self.made(id)
    }

    async fn delete(&self, _: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_zone(id)?)
    }

    fn read(
        &self,
        _: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<cumulo_engine::Observed>> {
        let z = self.0.zone(id)?;
        let made = self.made(id)?;
        let mut props = Map::new();
        props.insert("Name".into(), json!(z.name));
        if !z.comment.is_empty() {
            props.insert("HostedZoneConfig".into(), json!({"Comment": z.comment}));
        }
        Ok(Some(cumulo_engine::Observed {
            properties: props,
            attributes: made.attributes,
        }))
    }
}

// ---- record sets ----

/// The members of a template record set as the API names them.
fn record_api(props: &Map<String, Value>, key: &str) -> Result<Value, ProviderError> {
    let mut v = json!({
        "Name": required(props, "Name")?,
        "Type": required(props, "Type")?,
    });
    if let Some(ttl) = scalar(props, "TTL")? {
        let n: i64 = ttl
            .parse()
            .map_err(|_| invalid(format!("#/{key}TTL: expected type: Integer, found: String")))?;
        v["TTL"] = json!(n);
    }
    if props.contains_key("ResourceRecords") {
        let values = list(props, "ResourceRecords")?
            .iter()
            .map(|r| {
                scalar_value(r).map(|s| json!({"Value": s})).ok_or_else(|| {
                    invalid(format!("#/{key}ResourceRecords: expected type: String"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        v["ResourceRecords"] = Value::Array(values);
    }
    for k in [
        "SetIdentifier",
        "Weight",
        "Region",
        "Failover",
        "GeoLocation",
        "MultiValueAnswer",
        "HealthCheckId",
        "AliasTarget",
        "CidrRoutingConfig",
        "GeoProximityLocation",
    ] {
        if let Some(x) = props.get(k).filter(|x| !x.is_null()) {
            v[k] = x.clone();
        }
    }
    Ok(v)
}

fn record_of(props: &Map<String, Value>, key: &str) -> Answer<RecordSet> {
    Ok(record_from_api(&record_api(props, key)?)?)
}

const RECORD_PROPS: &[&str] = &[
    "AliasTarget",
    "CidrRoutingConfig",
    "Comment",
    "Failover",
    "GeoLocation",
    "GeoProximityLocation",
    "HealthCheckId",
    "HostedZoneId",
    "HostedZoneName",
    "MultiValueAnswer",
    "Name",
    "Region",
    "ResourceRecords",
    "SetIdentifier",
    "TTL",
    "Type",
    "Weight",
];

/// The zone a record set (or group) names by id or by name.
fn zone_of(dns: &Route53Service, props: &Map<String, Value>) -> Answer<String> {
    if let Some(id) = scalar(props, "HostedZoneId")? {
        return Ok(super::names::bare_zone_id(&id).to_string());
    }
    let Some(name) = scalar(props, "HostedZoneName")? else {
        return Err(invalid("#: one of HostedZoneId or HostedZoneName is required".into()).into());
    };
    let zones = dns.zones_named(&name);
    match zones.as_slice() {
        [one] => Ok(one.id.clone()),
        // NoSuchHostedZone, so a delete whose zone is gone counts as done.
        [] => Err(Fault::Service(AwsError::not_found(
            "NoSuchHostedZone",
            format!("No hosted zones named {} found", normalize_name(&name)),
        ))),
        _ => Err(Fault::Service(AwsError::bad_request(
            "InvalidInput",
            format!(
                "Found more than one hosted zone named {}",
                normalize_name(&name)
            ),
        ))),
    }
}

/// The live copy of a set (DELETE must name its current values).
fn live(dns: &Route53Service, zone: &str, r: &RecordSet) -> Answer<Option<RecordSet>> {
    Ok(dns
        .zone(zone)?
        .records
        .into_iter()
        .find(|x| x.name == r.name && x.rtype == r.rtype && x.set_identifier == r.set_identifier))
}

fn change(action: &str, record: RecordSet) -> RecordChange {
    RecordChange {
        action: action.to_string(),
        record,
    }
}

fn batch_comment(props: &Map<String, Value>) -> Result<Option<String>, ProviderError> {
    scalar(props, "Comment")
}

struct Record(Arc<Route53Service>);

#[async_trait::async_trait]
impl Declared for Record {
    const ATTRIBUTES: &'static [&'static str] = &["Id"];
    const TYPE: &'static str = "AWS::Route53::RecordSet";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = RECORD_PROPS;
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, _: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let zone = zone_of(&self.0, props)?;
        let record = record_of(props, "")?;
        self.0
            .change_records(&zone, &[change("CREATE", record)], batch_comment(props)?)?;
        let name = required(props, "Name")?;
        Ok(Made::new(&name).with("Id", name.clone()))
    }

    async fn update(
        &self,
        _: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let zone = zone_of(&self.0, new)?;
        let before = record_of(old, "")?;
        let after = record_of(new, "")?;
        let same_set = before.name == after.name
            && before.rtype == after.rtype
            && before.set_identifier == after.set_identifier;
        let changes = if same_set {
            vec![change("UPSERT", after)]
        } else {
            let mut out = Vec::new();
            if let Some(current) = live(&self.0, &zone, &before)? {
                out.push(change("DELETE", current));
            }
            out.push(change("CREATE", after));
            out
        };
        self.0
            .change_records(&zone, &changes, batch_comment(new)?)?;
        Ok(Made::new(id).with("Id", id.to_string()))
    }

    async fn delete(&self, _: &ProviderContext, _: &str, props: &Map<String, Value>) -> Answer<()> {
        let zone = zone_of(&self.0, props)?;
        if let Some(current) = live(&self.0, &zone, &record_of(props, "")?)? {
            self.0
                .change_records(&zone, &[change("DELETE", current)], None)?;
        }
        Ok(())
    }
}

struct RecordGroup(Arc<Route53Service>);

/// The group's record sets; one naming a zone of its own must name the group's (AWS writes
/// a group's sets in one batch to one zone).
fn group_records(dns: &Route53Service, props: &Map<String, Value>) -> Answer<Vec<RecordSet>> {
    let zone = zone_of(dns, props)?;
    let mut out = Vec::new();
    for (i, r) in list(props, "RecordSets")?.iter().enumerate() {
        let o = object_of(r, "RecordSets")?;
        if (o.contains_key("HostedZoneId") || o.contains_key("HostedZoneName"))
            && zone_of(dns, o)? != zone
        {
            return Err(invalid(format!(
                "#/RecordSets/{i}: the record set names a hosted zone other than the group's"
            ))
            .into());
        }
        crate::providers::check_known(
            "AWS::Route53::RecordSetGroup",
            o,
            &RECORD_PROPS
                .iter()
                .copied()
                .filter(|k| !matches!(*k, "Comment"))
                .collect::<Vec<_>>(),
            &[],
        )?;
        out.push(record_of(o, &format!("RecordSets/{i}/"))?);
    }
    Ok(out)
}

#[async_trait::async_trait]
impl Declared for RecordGroup {
    const ATTRIBUTES: &'static [&'static str] = &["Id"];
    const TYPE: &'static str = "AWS::Route53::RecordSetGroup";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] =
        &["Comment", "HostedZoneId", "HostedZoneName", "RecordSets"];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let zone = zone_of(&self.0, props)?;
        let changes: Vec<RecordChange> = group_records(&self.0, props)?
            .into_iter()
            .map(|r| change("CREATE", r))
            .collect();
        if !changes.is_empty() {
            self.0
                .change_records(&zone, &changes, batch_comment(props)?)?;
        }
        let id = self.created_identity(ctx, props).unwrap_or_default();
        Ok(Made::new(&id).with("Id", id.clone()))
    }

    fn created_identity(&self, ctx: &ProviderContext, _: &Map<String, Value>) -> Option<String> {
        Some(ctx.generated_name(128, ""))
    }

    async fn update(
        &self,
        _: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let zone = zone_of(&self.0, new)?;
        let want = group_records(&self.0, new)?;
        let mut changes = Vec::new();
        for r in group_records(&self.0, old)? {
            let kept = want.iter().any(|w| {
                w.name == r.name && w.rtype == r.rtype && w.set_identifier == r.set_identifier
            });
            if !kept && let Some(current) = live(&self.0, &zone, &r)? {
                changes.push(change("DELETE", current));
            }
        }
        changes.extend(want.into_iter().map(|r| change("UPSERT", r)));
        if !changes.is_empty() {
            self.0
                .change_records(&zone, &changes, batch_comment(new)?)?;
        }
        Ok(Made::new(id).with("Id", id.to_string()))
    }

    async fn delete(&self, _: &ProviderContext, _: &str, props: &Map<String, Value>) -> Answer<()> {
        let zone = zone_of(&self.0, props)?;
        let mut changes = Vec::new();
        for r in group_records(&self.0, props)? {
            if let Some(current) = live(&self.0, &zone, &r)? {
                changes.push(change("DELETE", current));
            }
        }
        if !changes.is_empty() {
            self.0.change_records(&zone, &changes, None)?;
        }
        Ok(())
    }
}

// ---- AWS::Route53::HealthCheck ----

struct Check(Arc<Route53Service>);

fn check_config(props: &Map<String, Value>) -> Answer<Map<String, Value>> {
    let Some(c) = props.get("HealthCheckConfig") else {
        return Err(invalid("#: required key [HealthCheckConfig] not found".into()).into());
    };
    let mut config = object_of(c, "HealthCheckConfig")?.clone();
    // The template writes numbers as it likes ("80"); the API's are integers.
    for k in [
        "Port",
        "RequestInterval",
        "FailureThreshold",
        "HealthThreshold",
    ] {
        if let Some(n) = config
            .get(k)
            .and_then(|v| scalar_value(v)?.parse::<i64>().ok())
        {
            config.insert(k.to_string(), json!(n));
        }
    }
    for k in ["Inverted", "Disabled", "EnableSNI", "MeasureLatency"] {
        if let Some(b) = config.get(k).and_then(scalar_value) {
            config.insert(k.to_string(), json!(b.eq_ignore_ascii_case("true")));
        }
    }
    Ok(config)
}

#[async_trait::async_trait]
impl Declared for Check {
    const ATTRIBUTES: &'static [&'static str] = &["HealthCheckId"];
    const TYPE: &'static str = "AWS::Route53::HealthCheck";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["HealthCheckConfig", "HealthCheckTags"];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;
    const LIMITATION: Option<&'static str> =
        Some("cumulo: no health checker probes the endpoint locally");

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let (h, _) = self
            .0
            .create_health_check(&caller_reference(ctx), check_config(props)?)?;
        let tags = tag_list(ctx, props, "HealthCheckTags")?;
        self.0.change_tags("healthcheck", &h.id, &tags, &[])?;
        Ok(Made::new(&h.id).with("HealthCheckId", h.id.clone()))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let config = check_config(new)?;
        let current = self.0.health_check(id)?;
        let reset: Vec<String> = [
            "ResourcePath",
            "FullyQualifiedDomainName",
            "Regions",
            "ChildHealthChecks",
        ]
        .iter()
        .filter(|k| current.config.contains_key(**k) && !config.contains_key(**k))
        .map(|k| k.to_string())
        .collect();
        self.0.change_health_check(id, &config, None, &reset)?;
        let tags = tag_list(ctx, new, "HealthCheckTags")?;
        let stale: Vec<String> = current
            .tags
            .keys()
            .filter(|k| !tags.iter().any(|(t, _)| t == *k))
            .cloned()
            .collect();
        self.0.change_tags("healthcheck", id, &tags, &stale)?;
        Ok(Made::new(id).with("HealthCheckId", id.to_string()))
    }

    async fn delete(&self, _: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_health_check(id)?)
    }
}

// ---- DNSSEC, refused ----

/// AWS::Route53::DNSSEC (`false`) and AWS::Route53::KeySigningKey (`true`).
struct Unsigned<const KEY: bool>;

#[async_trait::async_trait]
impl<const KEY: bool> Declared for Unsigned<KEY> {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = if KEY {
        "AWS::Route53::KeySigningKey"
    } else {
        "AWS::Route53::DNSSEC"
    };
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "HostedZoneId",
        "cumulo does not sign hosted zones (DNSSEC is not emulated)",
    )];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, _: &ProviderContext, _: &Map<String, Value>) -> Answer<Made> {
        Err(crate::providers::unsupported_prop(
            Self::TYPE,
            "HostedZoneId",
            "cumulo does not sign hosted zones (DNSSEC is not emulated)",
        )
        .into())
    }

    async fn delete(&self, _: &ProviderContext, _: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(())
    }
}
