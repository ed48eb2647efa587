//! Hosted zones, changes and tags, answering in the API's member names; the typed zone and
//! record operations other services call in-process (Cloud Map's DNS namespaces, ACM's DNS
//! validation, CloudFormation's providers) are the `pub` ones here and in `records`.

use super::Route53Service;
use super::names::{bare_zone_id, compare_names, invalid_domain, normalize_name};
use super::state::{self, Change, HostedZone, RecordSet, State};
use cumulo_wire::AwsError;
use rand::Rng;
use serde_json::{Value, json};

pub use super::records::RecordChange;

/// The SOA record's TTL and the NS record's TTL that AWS gives a new zone.
const SOA_TTL: i64 = 900;
const NS_TTL: i64 = 172_800;
/// The name servers AWS reports for every private zone.
const PRIVATE_NAME_SERVERS: [&str; 4] = [
    "ns-0.awsdns-00.com",
    "ns-512.awsdns-00.net",
    "ns-1024.awsdns-00.org",
    "ns-1536.awsdns-00.co.uk",
];
/// The page size list operations answer with when the caller names none.
pub const DEFAULT_MAX_ITEMS: usize = 100;

pub fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

pub fn invalid_input(message: impl Into<String>) -> AwsError {
    err("InvalidInput", message)
}

pub fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(e.to_string())
}

pub fn no_such_zone(id: &str) -> AwsError {
    AwsError::not_found(
        "NoSuchHostedZone",
        format!("No hosted zone found with ID: {id}"),
    )
}

pub fn now_iso() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// `Z` or `C` followed by 20 upper-case letters and digits, as AWS's zone and change ids.
pub fn new_id(prefix: char) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    let tail: String = (0..20)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("{prefix}{tail}")
}

/// Four name servers, one per top-level domain, in AWS's `ns-N.awsdns-NN.<tld>` style: the
/// number N falls in the TLD's quarter of 0..2048 and NN is N / 32, as on AWS.
fn public_name_servers() -> Vec<String> {
    let mut rng = rand::rng();
    ["com", "net", "org", "co.uk"]
        .iter()
        .enumerate()
        .map(|(i, tld)| {
            let n = i * 512 + rng.random_range(0..512);
            format!("ns-{n}.awsdns-{:02}.{tld}", n / 32 % 64)
        })
        .collect()
}

fn default_records(name: &str, servers: &[String]) -> Vec<RecordSet> {
    let first = servers
        .first()
        .map(String::as_str)
        .unwrap_or("ns-0.awsdns-00.com");
    vec![
        RecordSet::simple(
            name,
            "NS",
            NS_TTL,
            servers.iter().map(|s| format!("{s}.")).collect(),
        ),
        RecordSet::simple(
            name,
            "SOA",
            SOA_TTL,
            vec![format!(
                "{first}. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400"
            )],
        ),
    ]
}

/// Whether a record is one Route 53 creates with the zone (its apex NS and SOA), which do not
/// keep the zone from being deleted.
pub fn is_default_record(zone: &HostedZone, r: &RecordSet) -> bool {
    r.name == zone.name && (r.rtype == "NS" || r.rtype == "SOA") && r.set_identifier.is_none()
}

pub struct NewZone<'a> {
    pub name: &'a str,
    pub caller_reference: &'a str,
    pub comment: &'a str,
    /// `(region, vpc id)` for a private zone.
    pub vpc: Option<(&'a str, &'a str)>,
}

/// A zone as the API's `HostedZone` member shows it.
pub fn zone_json(z: &HostedZone) -> Value {
    let mut config = json!({"PrivateZone": z.private});
    if !z.comment.is_empty() {
        config["Comment"] = json!(z.comment);
    }
    json!({
        "Id": format!("/hostedzone/{}", z.id),
        "Name": z.name,
        "CallerReference": z.caller_reference,
        "Config": config,
        "ResourceRecordSetCount": z.records.len(),
    })
}

fn vpcs_json(z: &HostedZone) -> Value {
    Value::Array(
        z.vpcs
            .iter()
            .map(|(r, v)| json!({"VPCRegion": r, "VPCId": v}))
            .collect(),
    )
}

fn change_json(c: &Change) -> Value {
    let mut v = json!({
        "Id": format!("/change/{}", c.id),
        "Status": if c.insync { "INSYNC" } else { "PENDING" },
        "SubmittedAt": c.submitted_at,
    });
    if let Some(comment) = &c.comment {
        v["Comment"] = json!(comment);
    }
    v
}

/// A page size as the `maxitems` query gives it.
pub fn max_items(input: &Value) -> Result<usize, AwsError> {
    match input.get("MaxItems").and_then(Value::as_str) {
        None => Ok(DEFAULT_MAX_ITEMS),
        Some(s) => s.trim().parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
            invalid_input(format!(
                "1 validation error detected: Value '{s}' at 'maxItems' failed to satisfy constraint: Member must be a positive integer"
            ))
        }),
    }
}

pub fn str_of<'a>(input: &'a Value, key: &str) -> &'a str {
    input.get(key).and_then(Value::as_str).unwrap_or("")
}

fn required<'a>(input: &'a Value, key: &str, path: &str) -> Result<&'a str, AwsError> {
    input.get(key).and_then(Value::as_str).ok_or_else(|| {
        invalid_input(format!(
            "1 validation error detected: Value null at '{path}' failed to satisfy constraint: Member must not be null"
        ))
    })
}

impl Route53Service {
    /// Runs `f` over the state and writes what it returns to the store before the state
    /// changes; an error changes nothing.
    pub(super) fn commit<T>(
        &self,
        f: impl FnOnce(&State) -> Result<(T, Vec<Write>), AwsError>,
    ) -> Result<T, AwsError> {
        let mut s = self.lock();
        let (out, mut writes) = f(&s)?;
        if writes.iter().any(|w| matches!(w, Write::Change(_))) && s.changes.len() >= KEPT_CHANGES {
            writes.extend(oldest_change(&s).map(Write::DropChange));
        }
        self.store
            .write(|tx| {
                for w in &writes {
                    match w {
                        Write::Zone(z) => state::save(tx, z)?,
                        Write::DropZone(id) => state::delete(tx, id)?,
                        Write::HealthCheck(h) => state::save_health_check(tx, h)?,
                        Write::DropHealthCheck(id) => state::delete_health_check(tx, id)?,
                        Write::Change(c) => state::save_change(tx, c)?,
                        Write::DropChange(id) => state::delete_change(tx, id)?,
                        Write::Reference(r) => state::save_caller_reference(tx, r)?,
                    }
                }
                Ok(())
            })
            .map_err(internal)?;
        for w in writes {
            match w {
                Write::Zone(z) => {
                    s.zones.insert(z.id.clone(), z);
                }
                Write::DropZone(id) => {
                    s.zones.remove(&id);
                }
                Write::HealthCheck(h) => {
                    s.health_checks.insert(h.id.clone(), h);
                }
                Write::DropHealthCheck(id) => {
                    s.health_checks.remove(&id);
                }
                Write::Change(c) => {
                    s.changes.insert(c.id.clone(), c);
                }
                Write::DropChange(id) => {
                    s.changes.remove(&id);
                }
                Write::Reference(r) => {
                    s.caller_references.insert(r);
                }
            }
        }
        Ok(out)
    }

    /// A private hosted zone associated with one VPC (Cloud Map's private DNS namespace).
    pub fn create_private_zone(
        &self,
        name: &str,
        vpc_region: &str,
        vpc_id: &str,
        caller_reference: &str,
        comment: &str,
    ) -> Result<String, AwsError> {
        self.create_zone(NewZone {
            name,
            caller_reference,
            comment,
            vpc: Some((vpc_region, vpc_id)),
        })
        .map(|z| z.id)
    }

    pub fn create_public_zone(
        &self,
        name: &str,
        caller_reference: &str,
        comment: &str,
    ) -> Result<String, AwsError> {
        self.create_zone(NewZone {
            name,
            caller_reference,
            comment,
            vpc: None,
        })
        .map(|z| z.id)
    }

    pub fn create_zone(&self, new: NewZone<'_>) -> Result<HostedZone, AwsError> {
        self.create_zone_with_change(new).map(|(z, _)| z)
    }

    fn create_zone_with_change(&self, new: NewZone<'_>) -> Result<(HostedZone, Change), AwsError> {
        let name = normalize_name(new.name);
        if invalid_domain(&name).is_some() {
            return Err(err(
                "InvalidDomainName",
                format!(
                    "{} is not a valid domain name.",
                    new.name.trim_end_matches('.')
                ),
            ));
        }
        if new.caller_reference.is_empty() || new.caller_reference.len() > 128 {
            return Err(invalid_input(format!(
                "1 validation error detected: Value '{}' at 'callerReference' failed to satisfy constraint: Member must have length between 1 and 128",
                new.caller_reference
            )));
        }
        if let Some((region, vpc)) = new.vpc {
            self.check_vpc(region, vpc)?;
        }
        self.commit(|s| {
            if s.caller_references.contains(new.caller_reference) {
                return Err(AwsError::new(
                    http::StatusCode::CONFLICT,
                    "HostedZoneAlreadyExists",
                    "A hosted zone has already been created with the specified caller reference.",
                ));
            }
            if let Some((region, vpc)) = new.vpc
                && let Some(other) = s
                    .zones
                    .values()
                    .find(|z| z.name == name && z.vpcs.iter().any(|(r, v)| r == region && v == vpc))
            {
                return Err(err(
                    "ConflictingDomainExists",
                    format!(
                        "The VPC {vpc} in {region} region is already associated with another private hosted zone that has the same name: {}",
                        other.name
                    ),
                ));
            }
            let private = new.vpc.is_some();
            let name_servers: Vec<String> = if private {
                PRIVATE_NAME_SERVERS.iter().map(|s| s.to_string()).collect()
            } else {
                public_name_servers()
            };
            let zone = HostedZone {
                id: new_id('Z'),
                records: default_records(&name, &name_servers),
                name: name.clone(),
                caller_reference: new.caller_reference.to_string(),
                comment: new.comment.to_string(),
                private,
                vpcs: new
                    .vpc
                    .map(|(r, v)| vec![(r.to_string(), v.to_string())])
                    .unwrap_or_default(),
                name_servers,
                tags: Default::default(),
                created_ms: now_ms(),
                query_logging: None,
            };
            let change = new_change(None);
            Ok((
                (zone.clone(), change.clone()),
                vec![
                    Write::Reference(zone.caller_reference.clone()),
                    Write::Zone(zone),
                    Write::Change(change),
                ],
            ))
        })
    }

    /// InvalidVPCId unless EC2 knows the VPC in that region.
    fn check_vpc(&self, region: &str, vpc: &str) -> Result<(), AwsError> {
        self.ec2
            .vpc(region, vpc)
            .map(|_| ())
            .map_err(|_| err("InvalidVPCId", "The VPC ID is invalid."))
    }

    /// A copy of one zone.
    pub fn zone(&self, zone_id: &str) -> Result<HostedZone, AwsError> {
        let id = bare_zone_id(zone_id);
        self.lock()
            .zones
            .get(id)
            .cloned()
            .ok_or_else(|| no_such_zone(id))
    }

    /// Every zone named `name` (normalized or not): what CloudFormation's `HostedZoneName`
    /// resolves through.
    pub fn zones_named(&self, name: &str) -> Vec<HostedZone> {
        let name = normalize_name(name);
        self.lock()
            .zones
            .values()
            .filter(|z| z.name == name)
            .cloned()
            .collect()
    }

    /// HostedZoneNotEmpty while records other than the apex NS and SOA exist, as AWS.
    pub fn delete_zone(&self, zone_id: &str) -> Result<(), AwsError> {
        self.delete_zone_with_change(zone_id).map(|_| ())
    }

    fn delete_zone_with_change(&self, zone_id: &str) -> Result<Change, AwsError> {
        let id = bare_zone_id(zone_id).to_string();
        self.commit(|s| {
            let zone = s.zones.get(&id).ok_or_else(|| no_such_zone(&id))?;
            if zone.records.iter().any(|r| !is_default_record(zone, r)) {
                return Err(err(
                    "HostedZoneNotEmpty",
                    "The specified hosted zone contains non-required resource record sets  and so cannot be deleted.",
                ));
            }
            let change = new_change(None);
            Ok((change.clone(), vec![Write::DropZone(id.clone()), Write::Change(change)]))
        })
    }

    /// Changes one zone (a copy, written through): comment, VPCs, tags, logging.
    pub(super) fn update_zone(
        &self,
        zone_id: &str,
        f: impl FnOnce(&mut HostedZone) -> Result<(), AwsError>,
    ) -> Result<HostedZone, AwsError> {
        let id = bare_zone_id(zone_id).to_string();
        self.commit(|s| {
            let mut zone = s.zones.get(&id).cloned().ok_or_else(|| no_such_zone(&id))?;
            f(&mut zone)?;
            Ok((zone.clone(), vec![Write::Zone(zone)]))
        })
    }

    pub fn set_zone_comment(&self, zone_id: &str, comment: &str) -> Result<HostedZone, AwsError> {
        self.update_zone(zone_id, |z| {
            z.comment = comment.to_string();
            Ok(())
        })
    }

    /// CreateQueryLoggingConfig: one per zone, logging to a CloudWatch Logs group ARN.
    pub fn create_query_logging(&self, zone_id: &str, group_arn: &str) -> Result<String, AwsError> {
        if !group_arn.starts_with("arn:") || !group_arn.contains(":log-group:") {
            return Err(AwsError::not_found(
                "NoSuchCloudWatchLogsLogGroup",
                "There is no CloudWatch Logs log group with the specified ARN.",
            ));
        }
        let id = uuid::Uuid::new_v4().to_string();
        self.update_zone(zone_id, |z| {
            if z.query_logging.is_some() {
                return Err(AwsError::new(
                    http::StatusCode::CONFLICT,
                    "QueryLoggingConfigAlreadyExists",
                    "You can create only one query logging configuration for a hosted zone, and a query logging configuration already exists for this hosted zone.",
                ));
            }
            z.query_logging = Some((id.clone(), group_arn.to_string()));
            Ok(())
        })?;
        Ok(id)
    }

    /// The zone holding query logging configuration `id`.
    fn zone_logging(&self, id: &str) -> Result<HostedZone, AwsError> {
        self.lock()
            .zones
            .values()
            .find(|z| z.query_logging.as_ref().is_some_and(|(i, _)| i == id))
            .cloned()
            .ok_or_else(|| {
                AwsError::not_found(
                    "NoSuchQueryLoggingConfig",
                    "There is no DNS query logging configuration with the specified ID.",
                )
            })
    }

    pub fn delete_query_logging(&self, id: &str) -> Result<(), AwsError> {
        let zone = self.zone_logging(id)?;
        self.update_zone(&zone.id, |z| {
            z.query_logging = None;
            Ok(())
        })
        .map(|_| ())
    }

    /// What CloudFormation's QueryLoggingConfig asks for: a configuration to `group`, or none.
    pub fn set_query_logging(&self, zone_id: &str, group: Option<&str>) -> Result<(), AwsError> {
        let current = self.zone(zone_id)?.query_logging;
        match (current, group) {
            (Some((_, arn)), Some(g)) if arn == g => Ok(()),
            (Some((id, _)), want) => {
                self.delete_query_logging(&id)?;
                want.map_or(Ok(()), |g| {
                    self.create_query_logging(zone_id, g).map(|_| ())
                })
            }
            (None, Some(g)) => self.create_query_logging(zone_id, g).map(|_| ()),
            (None, None) => Ok(()),
        }
    }

    pub fn api_create_query_logging(&self, input: &Value) -> Result<Value, AwsError> {
        let zone = required(input, "HostedZoneId", "hostedZoneId")?;
        let arn = required(
            input,
            "CloudWatchLogsLogGroupArn",
            "cloudWatchLogsLogGroupArn",
        )?;
        let zone = bare_zone_id(zone).to_string();
        let id = self.create_query_logging(&zone, arn)?;
        Ok(json!({
            "QueryLoggingConfig": {"Id": id, "HostedZoneId": zone, "CloudWatchLogsLogGroupArn": arn},
            "Location": format!("https://route53.amazonaws.com/2013-04-01/queryloggingconfig/{id}"),
        }))
    }

    pub fn api_get_query_logging(&self, id: &str) -> Result<Value, AwsError> {
        let z = self.zone_logging(id)?;
        let arn = z.query_logging.map(|(_, a)| a).unwrap_or_default();
        Ok(
            json!({"QueryLoggingConfig": {"Id": id, "HostedZoneId": z.id, "CloudWatchLogsLogGroupArn": arn}}),
        )
    }

    pub fn api_list_query_logging(&self, input: &Value) -> Result<Value, AwsError> {
        let only = input
            .get("HostedZoneId")
            .and_then(Value::as_str)
            .map(bare_zone_id);
        if let Some(z) = only {
            self.zone(z)?;
        }
        let s = self.lock();
        let configs: Vec<Value> = s
            .zones
            .values()
            .filter(|z| only.is_none_or(|o| o == z.id))
            .filter_map(|z| {
                z.query_logging.as_ref().map(|(id, arn)| {
                    json!({"Id": id, "HostedZoneId": z.id, "CloudWatchLogsLogGroupArn": arn})
                })
            })
            .collect();
        Ok(json!({"QueryLoggingConfigs": configs}))
    }

    /// Associates another VPC with a private zone.
    pub fn associate_vpc(&self, zone_id: &str, region: &str, vpc: &str) -> Result<(), AwsError> {
        self.check_vpc(region, vpc)?;
        self.associate_vpc_with_change(zone_id, region, vpc)
            .map(|_| ())
    }

    fn associate_vpc_with_change(
        &self,
        zone_id: &str,
        region: &str,
        vpc: &str,
    ) -> Result<Change, AwsError> {
        let change = new_change(None);
        let id = bare_zone_id(zone_id).to_string();
        self.commit(|s| {
            let mut zone = s.zones.get(&id).cloned().ok_or_else(|| no_such_zone(&id))?;
            if !zone.private {
                return Err(err(
                    "PublicZoneVPCAssociation",
                    "Public hosted zones cannot be associated with VPCs.",
                ));
            }
            if zone.vpcs.iter().any(|(r, v)| r == region && v == vpc) {
                return Err(err(
                    "ConflictingDomainExists",
                    format!("The VPC {vpc} in {region} region is already associated with the hosted zone {}.", zone.name),
                ));
            }
            if s.zones.values().any(|z| {
                z.id != zone.id && z.name == zone.name && z.vpcs.iter().any(|(r, v)| r == region && v == vpc)
            }) {
                return Err(err(
                    "ConflictingDomainExists",
                    format!(
                        "The VPC {vpc} in {region} region is already associated with another private hosted zone that has the same name: {}",
                        zone.name
                    ),
                ));
            }
            zone.vpcs.push((region.to_string(), vpc.to_string()));
            Ok((change.clone(), vec![Write::Zone(zone), Write::Change(change.clone())]))
        })
    }

    pub fn disassociate_vpc(&self, zone_id: &str, region: &str, vpc: &str) -> Result<(), AwsError> {
        self.disassociate_vpc_with_change(zone_id, region, vpc)
            .map(|_| ())
    }

    fn disassociate_vpc_with_change(
        &self,
        zone_id: &str,
        region: &str,
        vpc: &str,
    ) -> Result<Change, AwsError> {
        let change = new_change(None);
        let id = bare_zone_id(zone_id).to_string();
        self.commit(|s| {
            let mut zone = s.zones.get(&id).cloned().ok_or_else(|| no_such_zone(&id))?;
            let Some(at) = zone.vpcs.iter().position(|(r, v)| r == region && v == vpc) else {
                return Err(err(
                    "VPCAssociationNotFound",
                    format!("The specified VPC {vpc} and hosted zone {} are not currently associated.", zone.id),
                ));
            };
            if zone.vpcs.len() == 1 {
                return Err(err(
                    "LastVPCAssociation",
                    "The VPC that you're trying to disassociate from the private hosted zone is the last VPC that is associated with the hosted zone. Amazon Route 53 doesn't support disassociating the last VPC from a hosted zone.",
                ));
            }
            zone.vpcs.remove(at);
            Ok((change.clone(), vec![Write::Zone(zone), Write::Change(change.clone())]))
        })
    }

    /// Replaces a zone's tags with `tags` (CloudFormation's HostedZoneTags).
    pub fn set_zone_tags(&self, zone_id: &str, tags: &[(String, String)]) -> Result<(), AwsError> {
        self.update_zone(zone_id, |z| {
            z.tags = tags.iter().cloned().collect();
            Ok(())
        })
        .map(|_| ())
    }

    // ---- the API ----

    pub fn api_create_hosted_zone(&self, input: &Value) -> Result<Value, AwsError> {
        let name = required(input, "Name", "name")?;
        let caller = required(input, "CallerReference", "callerReference")?;
        let config = input.get("HostedZoneConfig");
        let comment = config.map(|c| str_of(c, "Comment")).unwrap_or("");
        let vpc = match input.get("VPC") {
            Some(v) => {
                let id = str_of(v, "VPCId");
                let region = str_of(v, "VPCRegion");
                if id.is_empty() || region.is_empty() {
                    return Err(err("InvalidVPCId", "The VPC ID is invalid."));
                }
                Some((region, id))
            }
            None => None,
        };
        if vpc.is_none()
            && config
                .and_then(|c| c.get("PrivateZone"))
                .and_then(Value::as_bool)
                == Some(true)
        {
            return Err(invalid_input(
                "When you're creating a private hosted zone (when you specify true for PrivateZone), you must also specify values for VPCId and VPCRegion.",
            ));
        }
        let (zone, change) = self.create_zone_with_change(NewZone {
            name,
            caller_reference: caller,
            comment,
            vpc,
        })?;
        let mut out = json!({
            "HostedZone": zone_json(&zone),
            "ChangeInfo": change_json(&change),
            "Location": format!("https://route53.amazonaws.com/2013-04-01/hostedzone/{}", zone.id),
        });
        if let Some((region, id)) = vpc {
            out["VPC"] = json!({"VPCRegion": region, "VPCId": id});
        } else {
            out["DelegationSet"] = json!({"NameServers": zone.name_servers});
        }
        Ok(out)
    }

    pub fn api_get_hosted_zone(&self, id: &str) -> Result<Value, AwsError> {
        let zone = self.zone(id)?;
        let mut out = json!({"HostedZone": zone_json(&zone)});
        if zone.private {
            out["VPCs"] = vpcs_json(&zone);
        } else {
            out["DelegationSet"] = json!({"NameServers": zone.name_servers});
        }
        Ok(out)
    }

    pub fn api_delete_hosted_zone(&self, id: &str) -> Result<Value, AwsError> {
        let change = self.delete_zone_with_change(id)?;
        Ok(json!({"ChangeInfo": change_json(&change)}))
    }

    pub fn api_update_comment(&self, input: &Value) -> Result<Value, AwsError> {
        let zone = self.set_zone_comment(str_of(input, "Id"), str_of(input, "Comment"))?;
        Ok(json!({"HostedZone": zone_json(&zone)}))
    }

    pub fn api_vpc_association(&self, input: &Value, associate: bool) -> Result<Value, AwsError> {
        let zone = str_of(input, "HostedZoneId");
        let vpc = input.get("VPC").cloned().unwrap_or(Value::Null);
        let (id, region) = (str_of(&vpc, "VPCId"), str_of(&vpc, "VPCRegion"));
        if id.is_empty() || region.is_empty() {
            return Err(err("InvalidVPCId", "The VPC ID is invalid."));
        }
        self.zone(zone)?;
        let change = if associate {
            self.check_vpc(region, id)?;
            self.associate_vpc_with_change(zone, region, id)?
        } else {
            self.disassociate_vpc_with_change(zone, region, id)?
        };
        Ok(json!({"ChangeInfo": change_json(&change)}))
    }

    /// ListHostedZones, in creation order, paged by zone id (`marker`).
    pub fn api_list_hosted_zones(&self, input: &Value) -> Result<Value, AwsError> {
        let max = max_items(input)?;
        let marker = input.get("Marker").and_then(Value::as_str);
        let kind = input.get("HostedZoneType").and_then(Value::as_str);
        let s = self.lock();
        let mut zones: Vec<&HostedZone> = s
            .zones
            .values()
            .filter(|z| kind != Some("PrivateHostedZone") || z.private)
            .collect();
        zones.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        let start = match marker {
            Some(m) => zones
                .iter()
                .position(|z| z.id == bare_zone_id(m))
                .ok_or_else(|| invalid_input(format!("Invalid marker: {m}")))?,
            None => 0,
        };
        let page: Vec<Value> = zones
            .iter()
            .skip(start)
            .take(max)
            .map(|z| zone_json(z))
            .collect();
        let next = zones.get(start + max);
        let mut out = json!({
            "HostedZones": page,
            "IsTruncated": next.is_some(),
            "MaxItems": max.to_string(),
        });
        if let Some(m) = marker {
            out["Marker"] = json!(m);
        }
        if let Some(n) = next {
            out["NextMarker"] = json!(n.id);
        }
        Ok(out)
    }

    /// ListHostedZonesByName: ordered by the names' reversed labels, then zone id.
    pub fn api_list_hosted_zones_by_name(&self, input: &Value) -> Result<Value, AwsError> {
        let max = max_items(input)?;
        let dns = input.get("DNSName").and_then(Value::as_str);
        let start_id = input.get("HostedZoneId").and_then(Value::as_str);
        if start_id.is_some() && dns.is_none() {
            return Err(invalid_input(
                "The input is not valid: HostedZoneId requires DNSName",
            ));
        }
        let s = self.lock();
        let mut zones: Vec<&HostedZone> = s.zones.values().collect();
        zones.sort_by(|a, b| compare_names(&a.name, &b.name).then_with(|| a.id.cmp(&b.id)));
        let start = match dns {
            Some(d) => {
                let d = normalize_name(d);
                zones
                    .iter()
                    .position(|z| {
                        let ord = compare_names(&z.name, &d);
                        ord.is_gt()
                            || (ord.is_eq()
                                && start_id.is_none_or(|i| z.id.as_str() >= bare_zone_id(i)))
                    })
                    .unwrap_or(zones.len())
            }
            None => 0,
        };
        let page: Vec<Value> = zones
            .iter()
            .skip(start)
            .take(max)
            .map(|z| zone_json(z))
            .collect();
        let next = zones.get(start + max);
        let mut out = json!({
            "HostedZones": page,
            "IsTruncated": next.is_some(),
            "MaxItems": max.to_string(),
        });
        if let Some(d) = dns {
            out["DNSName"] = json!(normalize_name(d));
        }
        if let Some(i) = start_id {
            out["HostedZoneId"] = json!(bare_zone_id(i));
        }
        if let Some(n) = next {
            out["NextDNSName"] = json!(n.name);
            out["NextHostedZoneId"] = json!(n.id);
        }
        Ok(out)
    }

    pub fn api_list_hosted_zones_by_vpc(&self, input: &Value) -> Result<Value, AwsError> {
        let vpc = required(input, "VPCId", "vpcId")?;
        let region = required(input, "VPCRegion", "vpcRegion")?;
        let s = self.lock();
        let summaries: Vec<Value> = s
            .zones
            .values()
            .filter(|z| z.vpcs.iter().any(|(r, v)| r == region && v == vpc))
            .map(|z| {
                json!({
                    "HostedZoneId": z.id,
                    "Name": z.name,
                    "Owner": {"OwningAccount": self.account_id},
                })
            })
            .collect();
        Ok(json!({"HostedZoneSummaries": summaries, "MaxItems": max_items(input)?.to_string()}))
    }

    pub fn api_hosted_zone_count(&self) -> Value {
        json!({"HostedZoneCount": self.lock().zones.len()})
    }

    /// GetChange: PENDING when first answered by the call that made it, INSYNC from the first
    /// GetChange on (the `resource_record_sets_changed` waiter's first poll sees INSYNC).
    pub fn api_get_change(&self, id: &str) -> Result<Value, AwsError> {
        let id = id.trim_start_matches("/change/").to_string();
        let change = self.commit(|s| {
            let mut c = s.changes.get(&id).cloned().ok_or_else(|| {
                AwsError::not_found(
                    "NoSuchChange",
                    format!("A change with the specified change ID does not exist: {id}"),
                )
            })?;
            if c.insync {
                return Ok((c, vec![]));
            }
            c.insync = true;
            Ok((c.clone(), vec![Write::Change(c)]))
        })?;
        Ok(json!({"ChangeInfo": change_json(&change)}))
    }

    // ---- tags ----

    fn tags_of(&self, kind: &str, id: &str) -> Result<Vec<(String, String)>, AwsError> {
        let s = self.lock();
        let tags = match kind {
            "hostedzone" => &s.zones.get(id).ok_or_else(|| no_such_zone(id))?.tags,
            "healthcheck" => {
                &s.health_checks
                    .get(id)
                    .ok_or_else(|| super::health::no_such_health_check(id))?
                    .tags
            }
            other => return Err(bad_resource_type(other)),
        };
        Ok(tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
    }

    fn tag_set(&self, kind: &str, id: &str) -> Result<Value, AwsError> {
        let tags: Vec<Value> = self
            .tags_of(kind, id)?
            .into_iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect();
        Ok(json!({"ResourceType": kind, "ResourceId": id, "Tags": tags}))
    }

    pub fn api_list_tags(&self, input: &Value) -> Result<Value, AwsError> {
        let set = self.tag_set(str_of(input, "ResourceType"), str_of(input, "ResourceId"))?;
        Ok(json!({"ResourceTagSet": set}))
    }

    pub fn api_list_tags_many(&self, input: &Value) -> Result<Value, AwsError> {
        let kind = str_of(input, "ResourceType");
        let ids: Vec<&str> = input
            .get("ResourceIds")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if ids.is_empty() || ids.len() > 10 {
            return Err(invalid_input(
                "1 validation error detected: Value at 'resourceIds' failed to satisfy constraint: Member must have length between 1 and 10",
            ));
        }
        let sets = ids
            .into_iter()
            .map(|id| self.tag_set(kind, id))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(json!({"ResourceTagSets": sets}))
    }

    /// ChangeTagsForResource: adds (or overwrites) and removes keys; at most 50 tags.
    pub fn change_tags(
        &self,
        kind: &str,
        id: &str,
        add: &[(String, String)],
        remove: &[String],
    ) -> Result<(), AwsError> {
        let apply = |tags: &mut std::collections::BTreeMap<String, String>| {
            for (k, v) in add {
                tags.insert(k.clone(), v.clone());
            }
            for k in remove {
                tags.remove(k);
            }
            if tags.len() > 50 {
                return Err(err(
                    "ThrottlingException",
                    "The number of tags for the resource exceeds the maximum of 50.",
                ));
            }
            Ok(())
        };
        match kind {
            "hostedzone" => self.update_zone(id, |z| apply(&mut z.tags)).map(|_| ()),
            "healthcheck" => self
                .update_health_check(id, |h| apply(&mut h.tags))
                .map(|_| ()),
            other => Err(bad_resource_type(other)),
        }
    }

    pub fn api_change_tags(&self, input: &Value) -> Result<Value, AwsError> {
        let add: Vec<(String, String)> = input
            .get("AddTags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|t| (str_of(t, "Key").to_string(), str_of(t, "Value").to_string()))
            .collect();
        if add.iter().any(|(k, _)| k.is_empty()) {
            return Err(invalid_input("Tag key must not be empty."));
        }
        let remove: Vec<String> = input
            .get("RemoveTagKeys")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        self.change_tags(
            str_of(input, "ResourceType"),
            str_of(input, "ResourceId"),
            &add,
            &remove,
        )?;
        Ok(json!({}))
    }
}

fn bad_resource_type(kind: &str) -> AwsError {
    invalid_input(format!(
        "1 validation error detected: Value '{kind}' at 'resourceType' failed to satisfy constraint: Member must satisfy enum value set: [healthcheck, hostedzone]"
    ))
}

/// A new change, PENDING.
pub fn new_change(comment: Option<String>) -> Change {
    Change {
        id: new_id('C'),
        submitted_at: now_iso(),
        comment,
        insync: false,
    }
}

pub fn change_info(c: &Change) -> Value {
    change_json(c)
}

/// How many changes GetChange can still answer: the oldest beyond these is forgotten as a new
/// one is made (AWS does not document how long it keeps them; every record write of Cloud Map
/// and CloudFormation makes one, so they are bounded).
const KEPT_CHANGES: usize = 2000;

/// The id of the change submitted first.
fn oldest_change(s: &State) -> Option<String> {
    s.changes
        .values()
        .min_by(|a, b| a.submitted_at.cmp(&b.submitted_at))
        .map(|c| c.id.clone())
}

/// One write a committed operation makes.
pub enum Write {
    Zone(HostedZone),
    DropZone(String),
    HealthCheck(super::state::HealthCheck),
    DropHealthCheck(String),
    Change(Change),
    DropChange(String),
    Reference(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    fn service() -> Route53Service {
        let store = Arc::new(Store::in_memory().expect("store"));
        let ec2 =
            Arc::new(crate::ec2::Ec2Service::new(store.clone(), &Config::default()).expect("ec2"));
        Route53Service::new(store, &Config::default(), ec2).expect("service")
    }

    #[test]
    fn a_new_zone_holds_its_ns_and_soa_and_four_name_servers() {
        let svc = service();
        let id = svc
            .create_public_zone("example.com", "ref-1", "")
            .expect("zone");
        let zone = svc.zone(&format!("/hostedzone/{id}")).expect("found");
        assert_eq!(zone.name_servers.len(), 4);
        assert!(zone.name_servers[3].ends_with(".co.uk"));
        let types: Vec<&str> = zone.records.iter().map(|r| r.rtype.as_str()).collect();
        assert_eq!(types, ["NS", "SOA"]);
        let again = svc.create_public_zone("example.com", "ref-1", "");
        assert_eq!(
            again.map_err(|e| e.code),
            Err("HostedZoneAlreadyExists".to_string())
        );
        let private = svc.create_private_zone("svc.local", "us-east-1", "vpc-nothere", "ref-2", "");
        assert_eq!(private.map_err(|e| e.code), Err("InvalidVPCId".to_string()));
    }

    #[test]
    fn a_zone_with_records_is_not_deleted_until_they_are() {
        let svc = service();
        let id = svc
            .create_public_zone("svc.example.com", "ref-2", "ns")
            .expect("zone");
        svc.upsert_record(&id, "a.svc.example.com", "A", 60, &["10.0.0.1".into()])
            .expect("upsert");
        svc.upsert_record(&id, "a.svc.example.com", "A", 60, &["10.0.0.2".into()])
            .expect("upsert again replaces");
        assert_eq!(svc.zone(&id).expect("zone").records.len(), 3);
        assert_eq!(
            svc.public_record_values("A.svc.example.com", "A"),
            Some(vec!["10.0.0.2".to_string()])
        );
        let e = svc.delete_zone(&id).expect_err("not empty");
        assert_eq!(e.code, "HostedZoneNotEmpty");
        svc.delete_record(&id, "a.svc.example.com.", "A")
            .expect("delete");
        let e = svc
            .delete_record(&id, "a.svc.example.com.", "A")
            .expect_err("gone");
        assert_eq!(e.code, "InvalidChangeBatch");
        assert!(e.message.contains("but it was not found"), "{}", e.message);
        svc.delete_zone(&id).expect("deleted");
        assert_eq!(
            svc.zone(&id).map_err(|e| e.code),
            Err("NoSuchHostedZone".into())
        );
    }
}
