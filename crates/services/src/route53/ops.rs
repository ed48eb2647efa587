//! Typed Route 53 operations over hosted zones and their record sets. Other services call the
//! `pub` ones in-process (Cloud Map's DNS namespaces); the wire layer calls them too.

use super::Route53Service;
use super::state::{self, HostedZone, RecordSet};
use cumulo_wire::AwsError;
use rand::Rng;

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

fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(e.to_string())
}

pub fn no_such_zone(id: &str) -> AwsError {
    AwsError::not_found(
        "NoSuchHostedZone",
        format!("No hosted zone found with ID: {id}"),
    )
}

fn invalid_change_batch(message: String) -> AwsError {
    err("InvalidChangeBatch", format!("[{message}]"))
}

/// A DNS name as Route 53 stores and reports it: lower case, with the trailing dot, and `*`
/// escaped as `\052` (AWS answers names in that octal escape form).
pub fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    for c in name.trim().chars() {
        match c {
            '*' => out.push_str("\\052"),
            c => out.extend(c.to_lowercase()),
        }
    }
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

/// A zone id as callers may give it: bare `Z...` or `/hostedzone/Z...`.
pub fn bare_zone_id(id: &str) -> &str {
    id.trim_start_matches("/hostedzone/")
}

/// Whether `name` is `zone` or a name below it (both normalized).
pub fn within_zone(name: &str, zone: &str) -> bool {
    name == zone || name.ends_with(&format!(".{zone}"))
}

fn new_zone_id() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    let tail: String = (0..20)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("Z{tail}")
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
        RecordSet {
            name: name.to_string(),
            rtype: "NS".into(),
            ttl: Some(NS_TTL),
            values: servers.iter().map(|s| format!("{s}.")).collect(),
        },
        RecordSet {
            name: name.to_string(),
            rtype: "SOA".into(),
            ttl: Some(SOA_TTL),
            values: vec![format!(
                "{first}. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400"
            )],
        },
    ]
}

/// Whether a record is one Route 53 creates with the zone (its apex NS and SOA), which do not
/// keep the zone from being deleted.
fn is_default_record(zone: &HostedZone, r: &RecordSet) -> bool {
    r.name == zone.name && (r.rtype == "NS" || r.rtype == "SOA")
}

pub struct NewZone<'a> {
    pub name: &'a str,
    pub caller_reference: &'a str,
    pub comment: &'a str,
    /// `(region, vpc id)` for a private zone.
    pub vpc: Option<(&'a str, &'a str)>,
}

impl Route53Service {
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
        let name = normalize_name(new.name);
        if name == "." || name.contains("..") || name.len() > 1024 {
            return Err(err(
                "InvalidDomainName",
                format!("{} is reserved by AWS!", new.name),
            ));
        }
        let mut zones = self.lock();
        if zones
            .values()
            .any(|z| z.caller_reference == new.caller_reference)
        {
            return Err(err(
                "HostedZoneAlreadyExists",
                format!(
                    "A hosted zone has already been created with the specified caller reference: {}",
                    new.caller_reference
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
            id: new_zone_id(),
            records: default_records(&name, &name_servers),
            name,
            caller_reference: new.caller_reference.to_string(),
            comment: new.comment.to_string(),
            private,
            vpcs: new
                .vpc
                .map(|(r, v)| vec![(r.to_string(), v.to_string())])
                .unwrap_or_default(),
            name_servers,
        };
        self.store
            .write(|tx| state::save(tx, &zone))
            .map_err(internal)?;
        zones.insert(zone.id.clone(), zone.clone());
        Ok(zone)
    }

    /// A copy of one zone.
    pub fn zone(&self, zone_id: &str) -> Result<HostedZone, AwsError> {
        let id = bare_zone_id(zone_id);
        self.lock().get(id).cloned().ok_or_else(|| no_such_zone(id))
    }

    /// HostedZoneNotEmpty while records other than the apex NS and SOA exist, as AWS.
    pub fn delete_zone(&self, zone_id: &str) -> Result<(), AwsError> {
        let id = bare_zone_id(zone_id);
        let mut zones = self.lock();
        let zone = zones.get(id).ok_or_else(|| no_such_zone(id))?;
        if zone.records.iter().any(|r| !is_default_record(zone, r)) {
            return Err(err(
                "HostedZoneNotEmpty",
                "The specified hosted zone contains non-required resource record sets  and so cannot be deleted.",
            ));
        }
        self.store
            .write(|tx| state::delete(tx, id))
            .map_err(internal)?;
        zones.remove(id);
        Ok(())
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
        let id = bare_zone_id(zone_id);
        let name = normalize_name(name);
        let mut zones = self.lock();
        let zone = zones.get(id).ok_or_else(|| no_such_zone(id))?;
        if !within_zone(&name, &zone.name) {
            return Err(invalid_change_batch(format!(
                "RRSet with DNS name {name} is not permitted in zone {}",
                zone.name
            )));
        }
        if values.is_empty() {
            return Err(invalid_change_batch(
                "Invalid request: Expected exactly one of [AliasTarget, all of [TTL, and ResourceRecords], or TrafficPolicyInstanceId], but found none in Change with [Action=UPSERT, Name=".to_string()
                    + &name
                    + ", Type="
                    + rtype
                    + ", SetIdentifier=null]",
            ));
        }
        let mut updated = zone.clone();
        let record = RecordSet {
            name: name.clone(),
            rtype: rtype.to_string(),
            ttl: Some(ttl),
            values: values.to_vec(),
        };
        match updated
            .records
            .iter_mut()
            .find(|r| r.name == name && r.rtype == rtype)
        {
            Some(r) => *r = record,
            None => updated.records.push(record),
        }
        self.store
            .write(|tx| state::save(tx, &updated))
            .map_err(internal)?;
        zones.insert(id.to_string(), updated);
        Ok(())
    }

    /// DELETE of one simple record, whatever its values.
    pub fn delete_record(&self, zone_id: &str, name: &str, rtype: &str) -> Result<(), AwsError> {
        let id = bare_zone_id(zone_id);
        let name = normalize_name(name);
        let mut zones = self.lock();
        let zone = zones.get(id).ok_or_else(|| no_such_zone(id))?;
        let Some(at) = zone
            .records
            .iter()
            .position(|r| r.name == name && r.rtype == rtype)
        else {
            return Err(invalid_change_batch(format!(
                "Tried to delete resource record set [name='{name}', type='{rtype}'] but it was not found"
            )));
        };
        let mut updated = zone.clone();
        updated.records.remove(at);
        self.store
            .write(|tx| state::save(tx, &updated))
            .map_err(internal)?;
        zones.insert(id.to_string(), updated);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cumulo_store::Store;
    use std::sync::Arc;

    fn service() -> Route53Service {
        Route53Service::new(Arc::new(Store::in_memory().expect("store"))).expect("service")
    }

    #[test]
    fn names_are_normalized_with_trailing_dot_and_escaped_star() {
        assert_eq!(normalize_name("Example.COM"), "example.com.");
        assert_eq!(normalize_name("*.example.com."), "\\052.example.com.");
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
    }

    #[test]
    fn a_zone_with_records_is_not_deleted_until_they_are() {
        let svc = service();
        let id = svc
            .create_private_zone("svc.local", "us-east-1", "vpc-1", "ref-2", "ns")
            .expect("zone");
        svc.upsert_record(&id, "a.svc.local", "A", 60, &["10.0.0.1".into()])
            .expect("upsert");
        svc.upsert_record(&id, "a.svc.local", "A", 60, &["10.0.0.2".into()])
            .expect("upsert again replaces");
        assert_eq!(svc.zone(&id).expect("zone").records.len(), 3);
        let e = svc.delete_zone(&id).expect_err("not empty");
        assert_eq!(e.code, "HostedZoneNotEmpty");
        svc.delete_record(&id, "a.svc.local.", "A").expect("delete");
        let e = svc
            .delete_record(&id, "a.svc.local.", "A")
            .expect_err("gone");
        assert_eq!(e.code, "InvalidChangeBatch");
        assert!(e.message.contains("but it was not found"), "{}", e.message);
        svc.delete_zone(&id).expect("deleted");
        assert_eq!(
            svc.zone(&id).map_err(|e| e.code),
            Err("NoSuchHostedZone".into())
        );
    }

    #[test]
    fn records_outside_the_zone_are_refused() {
        let svc = service();
        let id = svc
            .create_public_zone("example.com", "ref-3", "")
            .expect("zone");
        let e = svc
            .upsert_record(&id, "other.org", "A", 60, &["1.2.3.4".into()])
            .expect_err("outside");
        assert_eq!(e.code, "InvalidChangeBatch");
    }
}
