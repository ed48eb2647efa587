//! Resource record sets: a change batch is validated whole against the zone as each change
//! leaves it (a DELETE then a CREATE of the same set is how an update is written), with AWS's
//! `InvalidChangeBatch` messages, all of them at once, and either applies entirely or changes
//! nothing; ListResourceRecordSets orders and pages as AWS documents.

use super::Route53Service;
use super::names::{
    bare_zone_id, invalid_domain, is_ipv4, is_ipv6, normalize_name, order_key, within_zone,
};
use super::ops::{
    Write, change_info, invalid_input, is_default_record, max_items, new_change, no_such_zone,
    str_of,
};
use super::state::{HostedZone, RecordSet};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

/// The record types Route 53 accepts.
const TYPES: &[&str] = &[
    "SOA", "A", "TXT", "NS", "CNAME", "MX", "NAPTR", "PTR", "SRV", "SPF", "AAAA", "CAA", "DS",
    "TLSA", "SSHFP", "SVCB", "HTTPS",
];
/// Members of a record set kept as given besides name, type, TTL, values and set identifier.
const ROUTING: &[&str] = &[
    "AliasTarget",
    "Weight",
    "Region",
    "Failover",
    "GeoLocation",
    "MultiValueAnswer",
    "HealthCheckId",
    "CidrRoutingConfig",
    "GeoProximityLocation",
    "TrafficPolicyInstanceId",
];

/// One change of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordChange {
    /// CREATE, DELETE or UPSERT.
    pub action: String,
    pub record: RecordSet,
}

fn invalid_change_batch(messages: &[String]) -> AwsError {
    AwsError::bad_request("InvalidChangeBatch", format!("[{}]", messages.join(", ")))
}

/// `[name='x.', type='A']`, with the set identifier when there is one, as AWS's messages
/// name a record set.
fn describe(r: &RecordSet) -> String {
    match &r.set_identifier {
        Some(s) => format!(
            "[name='{}', type='{}', set-identifier='{s}']",
            r.name, r.rtype
        ),
        None => format!("[name='{}', type='{}']", r.name, r.rtype),
    }
}

fn same_set(a: &RecordSet, b: &RecordSet) -> bool {
    a.name == b.name && a.rtype == b.rtype && a.set_identifier == b.set_identifier
}

/// Whether a DELETE's record set is the stored one: same TTL, values (in any order) and
/// routing members.
fn same_values(a: &RecordSet, b: &RecordSet) -> bool {
    let mut va = a.values.clone();
    let mut vb = b.values.clone();
    va.sort();
    vb.sort();
    a.ttl == b.ttl && va == vb && a.routing == b.routing
}

fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A record set from the API's `ResourceRecordSet` member (`ResourceRecords: [{Value}]`).
pub fn record_from_api(v: &Value) -> Result<RecordSet, AwsError> {
    let name = str_of(v, "Name");
    let rtype = str_of(v, "Type");
    if name.is_empty() || rtype.is_empty() {
        return Err(invalid_input(
            "Invalid request: a ResourceRecordSet needs a Name and a Type",
        ));
    }
    if !TYPES.contains(&rtype) {
        return Err(invalid_input(format!(
            "1 validation error detected: Value '{rtype}' at 'changeBatch.changes.member.resourceRecordSet.type' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
            TYPES.join(", ")
        )));
    }
    let values = v.get("ResourceRecords").and_then(Value::as_array).map(|a| {
        a.iter()
            .map(|r| str_of(r, "Value").to_string())
            .collect::<Vec<_>>()
    });
    let mut routing = Map::new();
    for key in ROUTING {
        if let Some(x) = v.get(*key).filter(|x| !x.is_null()) {
            let x = match *key {
                "AliasTarget" => json!({
                    "HostedZoneId": bare_zone_id(str_of(x, "HostedZoneId")),
                    "DNSName": normalize_name(str_of(x, "DNSName")),
                    "EvaluateTargetHealth": match x.get("EvaluateTargetHealth") {
                        Some(Value::Bool(b)) => *b,
                        Some(Value::String(s)) => s == "true",
                        _ => false,
                    },
                }),
                "Weight" => json!(int_of(x).ok_or_else(|| invalid_input(format!(
                    "Invalid request: Weight must be an integer, not {x}"
                )))?),
                "MultiValueAnswer" => json!(matches!(x, Value::Bool(true)) || x == "true"),
                _ => x.clone(),
            };
            routing.insert(key.to_string(), x);
        }
    }
    Ok(RecordSet {
        name: normalize_name(name),
        rtype: rtype.to_string(),
        ttl: v.get("TTL").and_then(int_of),
        values: values.unwrap_or_default(),
        set_identifier: v
            .get("SetIdentifier")
            .and_then(Value::as_str)
            .map(str::to_string),
        routing,
    })
}

/// A record set as the API's `ResourceRecordSet` member.
pub fn record_json(r: &RecordSet) -> Value {
    let mut v = json!({"Name": r.name, "Type": r.rtype});
    if let Some(s) = &r.set_identifier {
        v["SetIdentifier"] = json!(s);
    }
    for (k, x) in &r.routing {
        v[k.as_str()] = x.clone();
    }
    if !r.routing.contains_key("AliasTarget") {
        if let Some(ttl) = r.ttl {
            v["TTL"] = json!(ttl);
        }
        v["ResourceRecords"] = Value::Array(r.values.iter().map(|x| json!({"Value": x})).collect());
    }
    v
}

/// What is wrong with one change's record set on its own (shape and values), as AWS words it.
fn shape_problems(action: &str, r: &RecordSet, zone: &HostedZone) -> Vec<String> {
    let mut out = Vec::new();
    let alias = r.routing.contains_key("AliasTarget");
    let plain = r.ttl.is_some() && !r.values.is_empty();
    let change = format!(
        "Change with [Action={action}, Name={}, Type={}, SetIdentifier={}]",
        r.name,
        r.rtype,
        r.set_identifier.as_deref().unwrap_or("null")
    );
    if alias == plain || (alias && (r.ttl.is_some() || !r.values.is_empty())) {
        let found = if alias { "more than one" } else { "none" };
        out.push(format!(
            "Invalid request: Expected exactly one of [AliasTarget, all of [TTL, and ResourceRecords], or TrafficPolicyInstanceId], but found {found} in {change}"
        ));
        return out;
    }
    let routed = [
        "Weight",
        "Region",
        "Failover",
        "GeoLocation",
        "MultiValueAnswer",
        "CidrRoutingConfig",
        "GeoProximityLocation",
    ]
    .iter()
    .any(|k| r.routing.contains_key(*k));
    if routed && r.set_identifier.is_none() {
        out.push(format!(
            "Invalid request: Missing field 'SetIdentifier' in {change}"
        ));
    }
    if !routed && r.set_identifier.is_some() {
        out.push(format!(
            "Invalid request: Missing field 'Weight', 'Region', 'Failover', 'GeoLocation', 'MultiValueAnswer', 'GeoProximityLocation' or 'CidrRoutingConfig' in {change}"
        ));
    }
    if !within_zone(&r.name, &zone.name) {
        out.push(format!(
            "RRSet with DNS name {} is not permitted in zone {}",
            r.name, zone.name
        ));
    } else if invalid_domain(&r.name).is_some() {
        out.push(format!("Invalid Resource Record: 'FATAL problem: DomainLabelEmpty or invalid name encountered with '{}''", r.name));
    }
    if r.rtype == "CNAME" && r.name == zone.name {
        out.push(format!(
            "RRSet of type CNAME with DNS name {} is not permitted at apex in zone {}",
            r.name, zone.name
        ));
    }
    for v in &r.values {
        match r.rtype.as_str() {
            "A" if !is_ipv4(v) => out.push(format!(
                "Invalid Resource Record: 'FATAL problem: ARRDATAIllegalIPv4Address (Value is not a valid IPv4 address) encountered with '{v}''"
            )),
            "AAAA" if !is_ipv6(v) => out.push(format!(
                "Invalid Resource Record: 'FATAL problem: AAAARRDATAIllegalIPv6Address (Value is not a valid IPv6 address) encountered with '{v}''"
            )),
            _ => {}
        }
    }
    if r.rtype == "CNAME" && r.values.len() > 1 {
        out.push(format!(
            "Invalid Resource Record: 'FATAL problem: RRDATAIncorrectNumberOfValues (CNAME records may have only one value) encountered with '{}''",
            r.values.join(",")
        ));
    }
    out
}

/// Whether an alias into the same zone names a record set that exists there.
fn alias_problem(r: &RecordSet, zone: &HostedZone, records: &[RecordSet]) -> Option<String> {
    let target = r.routing.get("AliasTarget")?;
    if str_of(target, "HostedZoneId") != zone.id {
        return None;
    }
    let dns = str_of(target, "DNSName");
    if !within_zone(dns, &zone.name) {
        return Some(format!(
            "Tried to create an alias that targets {dns}, type {} in zone {}, but the alias target name does not lie within the target zone",
            r.rtype, zone.id
        ));
    }
    (!records.iter().any(|x| x.name == dns && x.rtype == r.rtype)).then(|| {
        format!(
            "Tried to create an alias that targets {dns}, type {} in zone {}, but that target was not found",
            r.rtype, zone.id
        )
    })
}

/// CNAME records share their name with nothing else.
fn conflict(r: &RecordSet, zone: &HostedZone, records: &[RecordSet]) -> Option<String> {
    let others = records
        .iter()
        .filter(|x| x.name == r.name && !same_set(x, r));
    for x in others {
        if r.rtype == "CNAME" && x.rtype != "CNAME" {
            return Some(format!(
                "RRSet of type CNAME with DNS name {} is not permitted as it conflicts with other records with the same DNS name in zone {}",
                r.name, zone.name
            ));
        }
        if r.rtype != "CNAME" && x.rtype == "CNAME" {
            return Some(format!(
                "RRSet of type {} with DNS name {} is not permitted because a conflicting RRSet of type CNAME with the same DNS name already exists in zone {}",
                r.rtype, r.name, zone.name
            ));
        }
    }
    None
}

/// The zone's records after `changes`, or every problem AWS would name.
pub fn apply(zone: &HostedZone, changes: &[RecordChange]) -> Result<Vec<RecordSet>, Vec<String>> {
    let mut records = zone.records.clone();
    let mut problems = Vec::new();
    for c in changes {
        let r = &c.record;
        let shape = shape_problems(&c.action, r, zone);
        if !shape.is_empty() {
            problems.extend(shape);
            continue;
        }
        let at = records.iter().position(|x| same_set(x, r));
        match (c.action.as_str(), at) {
            ("CREATE", Some(_)) => problems.push(format!(
                "Tried to create resource record set {} but it already exists",
                describe(r)
            )),
            ("DELETE", None) => problems.push(format!(
                "Tried to delete resource record set {} but it was not found",
                describe(r)
            )),
            ("DELETE", Some(i)) => {
                if !same_values(&records[i], r) {
                    problems.push(format!(
                        "Tried to delete resource record set {} but the values provided do not match the current values",
                        describe(r)
                    ));
                } else if is_default_record(zone, &records[i]) {
                    problems.push(if r.rtype == "SOA" {
                        "A HostedZone must contain exactly one SOA record.".to_string()
                    } else {
                        "A HostedZone must contain at least one NS record for the zone itself."
                            .to_string()
                    });
                } else {
                    records.remove(i);
                }
            }
            ("CREATE" | "UPSERT", at) => {
                if let Some(p) =
                    conflict(r, zone, &records).or_else(|| alias_problem(r, zone, &records))
                {
                    problems.push(p);
                } else if r.rtype == "SOA" && at.is_none() {
                    problems.push("A HostedZone must contain exactly one SOA record.".to_string());
                } else {
                    match at {
                        Some(i) => records[i] = r.clone(),
                        None => records.push(r.clone()),
                    }
                }
            }
            (other, _) => problems.push(format!(
                "Invalid request: Action {other} is not one of CREATE, DELETE, UPSERT"
            )),
        }
    }
    if problems.is_empty() {
        Ok(records)
    } else {
        Err(problems)
    }
}

/// Route 53's listing order: names by reversed labels, then type, then set identifier.
fn sort_key(r: &RecordSet) -> (String, String, String) {
    (
        order_key(&r.name),
        r.rtype.clone(),
        r.set_identifier.clone().unwrap_or_default(),
    )
}

impl Route53Service {
    /// Applies a batch of changes to one zone, whole or not at all.
    pub fn change_records(
        &self,
        zone_id: &str,
        changes: &[RecordChange],
        comment: Option<String>,
    ) -> Result<super::state::Change, AwsError> {
        let id = bare_zone_id(zone_id).to_string();
        self.commit(|s| {
            let zone = s.zones.get(&id).ok_or_else(|| no_such_zone(&id))?;
            let records = apply(zone, changes).map_err(|p| invalid_change_batch(&p))?;
            let mut updated = zone.clone();
            updated.records = records;
            let change = new_change(comment);
            Ok((
                change.clone(),
                vec![Write::Zone(updated), Write::Change(change)],
            ))
        })
    }

    /// UPSERT of one simple record (Cloud Map instance A/SRV records).
    pub fn upsert_record(
        &self,
        zone_id: &str,
        name: &str,
        rtype: &str,
        ttl: i64,
        values: &[String],
    ) -> Result<(), AwsError> {
        let record = RecordSet::simple(&normalize_name(name), rtype, ttl, values.to_vec());
        self.change_records(
            zone_id,
            &[RecordChange {
                action: "UPSERT".into(),
                record,
            }],
            None,
        )
        .map(|_| ())
    }

    /// DELETE of one simple record (no set identifier), whatever its values.
    pub fn delete_record(&self, zone_id: &str, name: &str, rtype: &str) -> Result<(), AwsError> {
        let name = normalize_name(name);
        let zone = self.zone(zone_id)?;
        let record = zone
            .records
            .iter()
            .find(|r| r.name == name && r.rtype == rtype && r.set_identifier.is_none())
            .cloned()
            .ok_or_else(|| {
                invalid_change_batch(&[format!(
                    "Tried to delete resource record set [name='{name}', type='{rtype}'] but it was not found"
                )])
            })?;
        self.change_records(
            zone_id,
            &[RecordChange {
                action: "DELETE".into(),
                record,
            }],
            None,
        )
        .map(|_| ())
    }

    /// The values of the record `name`/`rtype` (no set identifier) in the public zone that
    /// answers for the name: of the public zones the name lies in, the one with the longest
    /// name, as DNS delegation decides. ACM's DNS validation looks its CNAMEs up here.
    pub fn public_record_values(&self, name: &str, rtype: &str) -> Option<Vec<String>> {
        let name = normalize_name(name);
        let s = self.lock();
        let zone = s
            .zones
            .values()
            .filter(|z| !z.private && within_zone(&name, &z.name))
            .max_by_key(|z| z.name.len())?;
        zone.records
            .iter()
            .find(|r| r.name == name && r.rtype == rtype && r.set_identifier.is_none())
            .map(|r| r.values.clone())
    }

    /// Whether the CNAME `name` → `value` is in the public zone that answers for `name`: how
    /// ACM and App Runner decide that a DNS validation record exists.
    pub fn has_public_cname(&self, name: &str, value: &str) -> bool {
        self.public_record_values(name, "CNAME")
            .is_some_and(|vals| {
                vals.iter().any(|v| {
                    v.trim_end_matches('.')
                        .eq_ignore_ascii_case(value.trim_end_matches('.'))
                })
            })
    }

    pub fn api_change_resource_record_sets(&self, input: &Value) -> Result<Value, AwsError> {
        let batch = input.get("ChangeBatch").cloned().unwrap_or(Value::Null);
        let list = batch
            .get("Changes")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| {
                invalid_input(
                    "1 validation error detected: Value '[]' at 'changeBatch.changes' failed to satisfy constraint: Member must have length greater than or equal to 1",
                )
            })?;
        let mut changes = Vec::new();
        for c in list {
            let action = str_of(c, "Action").to_string();
            if !matches!(action.as_str(), "CREATE" | "DELETE" | "UPSERT") {
                return Err(invalid_input(format!(
                    "1 validation error detected: Value '{action}' at 'changeBatch.changes.member.action' failed to satisfy constraint: Member must satisfy enum value set: [CREATE, DELETE, UPSERT]"
                )));
            }
            let record = record_from_api(c.get("ResourceRecordSet").unwrap_or(&Value::Null))?;
            changes.push(RecordChange { action, record });
        }
        let comment = batch
            .get("Comment")
            .and_then(Value::as_str)
            .map(str::to_string);
        let change = self.change_records(str_of(input, "HostedZoneId"), &changes, comment)?;
        Ok(json!({"ChangeInfo": change_info(&change)}))
    }

    pub fn api_list_resource_record_sets(&self, input: &Value) -> Result<Value, AwsError> {
        let zone = self.zone(str_of(input, "HostedZoneId"))?;
        let max = max_items(input)?.min(300);
        let start_name = input.get("StartRecordName").and_then(Value::as_str);
        let start_type = input.get("StartRecordType").and_then(Value::as_str);
        let start_id = input.get("StartRecordIdentifier").and_then(Value::as_str);
        if start_type.is_some() && start_name.is_none() {
            return Err(invalid_input(
                "The input is not valid: StartRecordType requires StartRecordName",
            ));
        }
        if let Some(t) = start_type
            && !TYPES.contains(&t)
        {
            return Err(invalid_input(format!("Invalid type: {t}")));
        }
        let mut records = zone.records.clone();
        records.sort_by_key(sort_key);
        let from = (
            start_name
                .map(|n| order_key(&normalize_name(n)))
                .unwrap_or_default(),
            start_type.unwrap_or("").to_string(),
            start_id.unwrap_or("").to_string(),
        );
        let begin = records
            .iter()
            .position(|r| sort_key(r) >= from)
            .unwrap_or(records.len());
        let page: Vec<Value> = records
            .iter()
            .skip(begin)
            .take(max)
            .map(record_json)
            .collect();
        let mut out = json!({
            "ResourceRecordSets": page,
            "IsTruncated": false,
            "MaxItems": max.to_string(),
        });
        if let Some(next) = records.get(begin + max) {
            out["IsTruncated"] = json!(true);
            out["NextRecordName"] = json!(next.name);
            out["NextRecordType"] = json!(next.rtype);
            if let Some(s) = &next.set_identifier {
                out["NextRecordIdentifier"] = json!(s);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone() -> HostedZone {
        HostedZone {
            id: "ZTEST".into(),
            name: "example.com.".into(),
            caller_reference: "r".into(),
            comment: String::new(),
            private: false,
            vpcs: vec![],
            name_servers: vec![],
            records: vec![
                RecordSet::simple("example.com.", "NS", 172800, vec!["ns-1.".into()]),
                RecordSet::simple(
                    "example.com.",
                    "SOA",
                    900,
                    vec!["ns-1. x. 1 7200 900 1209600 86400".into()],
                ),
            ],
            tags: Default::default(),
            created_ms: 0,
            query_logging: None,
        }
    }

    fn change(action: &str, name: &str, rtype: &str, value: &str) -> RecordChange {
        RecordChange {
            action: action.into(),
            record: RecordSet::simple(name, rtype, 300, vec![value.into()]),
        }
    }

    #[test]
    fn a_batch_applies_in_order_and_reports_every_problem_with_aws_words() {
        let z = zone();
        let ok = apply(
            &z,
            &[
                change("CREATE", "www.example.com.", "A", "10.0.0.1"),
                change("DELETE", "www.example.com.", "A", "10.0.0.1"),
                change("CREATE", "www.example.com.", "A", "10.0.0.2"),
            ],
        )
        .expect("valid batch");
        assert_eq!(ok.len(), 3);
        let mut z2 = z.clone();
        z2.records = ok;
        let problems = apply(
            &z2,
            &[
                change("CREATE", "www.example.com.", "A", "10.0.0.3"),
                change("DELETE", "www.example.com.", "A", "10.0.0.9"),
                change("DELETE", "nope.example.com.", "A", "10.0.0.9"),
                change("CREATE", "x.other.org.", "A", "10.0.0.9"),
                change("CREATE", "www.example.com.", "CNAME", "a.example.org"),
                change("CREATE", "ip.example.com.", "A", "not-an-ip"),
            ],
        )
        .expect_err("invalid");
        assert_eq!(
            problems,
            [
                "Tried to create resource record set [name='www.example.com.', type='A'] but it already exists",
                "Tried to delete resource record set [name='www.example.com.', type='A'] but the values provided do not match the current values",
                "Tried to delete resource record set [name='nope.example.com.', type='A'] but it was not found",
                "RRSet with DNS name x.other.org. is not permitted in zone example.com.",
                "RRSet of type CNAME with DNS name www.example.com. is not permitted as it conflicts with other records with the same DNS name in zone example.com.",
                "Invalid Resource Record: 'FATAL problem: ARRDATAIllegalIPv4Address (Value is not a valid IPv4 address) encountered with 'not-an-ip''",
            ]
        );
    }

    #[test]
    fn apex_records_cannot_be_deleted_and_weighted_sets_need_identifiers() {
        let z = zone();
        let soa = z.records[1].clone();
        let p = apply(
            &z,
            &[RecordChange {
                action: "DELETE".into(),
                record: soa,
            }],
        )
        .expect_err("apex");
        assert_eq!(p, ["A HostedZone must contain exactly one SOA record."]);
        let mut weighted = RecordSet::simple("w.example.com.", "A", 60, vec!["10.0.0.1".into()]);
        weighted.routing.insert("Weight".into(), json!(10));
        let p = apply(
            &z,
            &[RecordChange {
                action: "CREATE".into(),
                record: weighted.clone(),
            }],
        )
        .expect_err("no id");
        assert!(
            p[0].starts_with("Invalid request: Missing field 'SetIdentifier'"),
            "{p:?}"
        );
        weighted.set_identifier = Some("one".into());
        let mut other = weighted.clone();
        other.set_identifier = Some("two".into());
        let records = apply(
            &z,
            &[
                RecordChange {
                    action: "CREATE".into(),
                    record: weighted,
                },
                RecordChange {
                    action: "CREATE".into(),
                    record: other,
                },
            ],
        )
        .expect("two weighted sets of one name");
        assert_eq!(records.len(), 4);
    }

    #[test]
    fn records_list_in_reversed_label_then_type_order() {
        let mut rs = [
            RecordSet::simple("www.example.com.", "A", 1, vec![]),
            RecordSet::simple("example.com.", "SOA", 1, vec![]),
            RecordSet::simple("a.example.com.", "TXT", 1, vec![]),
            RecordSet::simple("example.com.", "NS", 1, vec![]),
            RecordSet::simple("example.com.", "A", 1, vec![]),
        ];
        rs.sort_by_key(sort_key);
        let order: Vec<(&str, &str)> = rs
            .iter()
            .map(|r| (r.name.as_str(), r.rtype.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("example.com.", "A"),
                ("example.com.", "NS"),
                ("example.com.", "SOA"),
                ("a.example.com.", "TXT"),
                ("www.example.com.", "A"),
            ]
        );
    }
}
