//! A DNS namespace's Route 53 zone and its instances' records. The zone is made before the
//! namespace is recorded (a refused zone, such as an unknown VPC, refuses the namespace) and
//! deleted after it. An instance of a service with a DnsConfig gets, per DnsRecords entry,
//! a record set `<service>.<namespace>.` whose SetIdentifier is the instance id (MultiValueAnswer
//! for the MULTIVALUE policy, Weight 1 for WEIGHTED); SRV adds `<instance>.<service>.<namespace>.`
//! A/AAAA for its target, as AWS Cloud Map writes them. Record writes follow the instance's
//! registration; one Route 53 refuses is reported on stderr and leaves the registration as is
//! (on AWS the asynchronous operation would report it).

use super::ServiceDiscoveryService;
use super::ops::NamespaceInput;
use crate::route53::{RecordChange, RecordSet};
use cumulo_wire::AwsError;
use serde_json::{Map, json};

impl ServiceDiscoveryService {
    /// The zone of a new DNS namespace (`None` for HTTP, or without Route 53).
    pub(super) fn create_zone(
        &self,
        region: &str,
        input: &NamespaceInput,
    ) -> Result<Option<String>, AwsError> {
        let Some(dns) = &self.route53 else {
            return Ok(None);
        };
        let reference = uuid::Uuid::new_v4().to_string();
        let comment = input.description.as_deref().unwrap_or("");
        match input.kind.as_str() {
            "DNS_PRIVATE" => {
                let vpc = input.vpc.as_deref().unwrap_or("");
                dns.create_private_zone(&input.name, region, vpc, &reference, comment)
                    .map(Some)
                    .map_err(|e| {
                        if e.code == "InvalidVPCId" {
                            super::ops::invalid(format!("VPC {vpc} does not exist."))
                        } else {
                            e
                        }
                    })
            }
            "DNS_PUBLIC" => dns
                .create_public_zone(&input.name, &reference, comment)
                .map(Some),
            _ => Ok(None),
        }
    }

    pub(super) fn delete_zone(&self, zone: &str) {
        if let Some(dns) = &self.route53
            && let Err(e) = dns.delete_zone(zone)
            && e.code != "NoSuchHostedZone"
        {
            eprintln!(
                "cumulo: servicediscovery: zone {zone} not deleted: {}",
                e.message
            );
        }
    }

    /// The zone and record sets an instance has (or would have) now.
    pub(super) fn instance_records(
        &self,
        region: &str,
        service_id: &str,
        instance_id: &str,
    ) -> Option<(String, Vec<RecordSet>)> {
        self.read(region, |r, _| {
            let s = r.services.get(service_id)?;
            let ns = r.namespaces.get(&s.namespace_id)?;
            let zone = ns.hosted_zone_id.clone()?;
            let i = s.instances.get(instance_id)?;
            let config = s.dns_config.as_ref()?;
            let policy = config["RoutingPolicy"].as_str().unwrap_or("MULTIVALUE");
            let service_name = format!("{}.{}", s.name, ns.name);
            let attr = |k: &str| i.attributes.get(k).cloned();
            let mut out = Vec::new();
            let routed = |name: &str, rtype: &str, ttl: i64, value: String| {
                let mut routing = Map::new();
                if policy == "WEIGHTED" {
                    routing.insert("Weight".into(), json!(1));
                } else {
                    routing.insert("MultiValueAnswer".into(), json!(true));
                }
                RecordSet {
                    name: crate::route53::names::normalize_name(name),
                    rtype: rtype.to_string(),
                    ttl: Some(ttl),
                    values: vec![value],
                    set_identifier: Some(instance_id.to_string()),
                    routing,
                }
            };
            for rec in config["DnsRecords"].as_array().into_iter().flatten() {
                let ttl = rec["TTL"].as_i64().unwrap_or(60);
                match rec["Type"].as_str().unwrap_or("") {
                    "A" => out.extend(
                        attr("AWS_INSTANCE_IPV4").map(|ip| routed(&service_name, "A", ttl, ip)),
                    ),
                    "AAAA" => out.extend(
                        attr("AWS_INSTANCE_IPV6").map(|ip| routed(&service_name, "AAAA", ttl, ip)),
                    ),
                    "CNAME" => out.extend(attr("AWS_INSTANCE_CNAME").map(|c| {
                        let mut r = routed(&service_name, "CNAME", ttl, c);
                        r.routing.remove("MultiValueAnswer");
                        r.routing.insert("Weight".into(), json!(1));
                        r
                    })),
                    "SRV" => {
                        let target = format!("{instance_id}.{service_name}");
                        let port = attr("AWS_INSTANCE_PORT").unwrap_or_default();
                        out.push(routed(
                            &service_name,
                            "SRV",
                            ttl,
                            format!(
                                "1 1 {port} {}",
                                crate::route53::names::normalize_name(&target)
                            ),
                        ));
                        if let Some(ip) = attr("AWS_INSTANCE_IPV4") {
                            out.push(RecordSet::simple(
                                &crate::route53::names::normalize_name(&target),
                                "A",
                                ttl,
                                vec![ip],
                            ));
                        }
                    }
                    _ => {}
                }
            }
            Some((zone, out))
        })
    }

    /// Upserts an instance's records after its registration.
    pub(super) fn write_instance_records(&self, region: &str, service_id: &str, instance_id: &str) {
        let (Some(dns), Some((zone, records))) = (
            &self.route53,
            self.instance_records(region, service_id, instance_id),
        ) else {
            return;
        };
        let changes: Vec<RecordChange> = records
            .into_iter()
            .map(|record| RecordChange {
                action: "UPSERT".into(),
                record,
            })
            .collect();
        if !changes.is_empty()
            && let Err(e) = dns.change_records(&zone, &changes, None)
        {
            eprintln!(
                "cumulo: servicediscovery: records of instance {instance_id} not written: {}",
                e.message
            );
        }
    }

    /// Deletes the records an instance had, after its deregistration.
    pub(super) fn delete_records(&self, stale: Option<(String, Vec<RecordSet>)>) {
        let (Some(dns), Some((zone, records))) = (&self.route53, stale) else {
            return;
        };
        let Ok(live) = dns.zone(&zone) else {
            return;
        };
        let changes: Vec<RecordChange> = records
            .iter()
            .filter_map(|r| {
                live.records.iter().find(|x| {
                    x.name == r.name && x.rtype == r.rtype && x.set_identifier == r.set_identifier
                })
            })
            .map(|x| RecordChange {
                action: "DELETE".into(),
                record: x.clone(),
            })
            .collect();
        if !changes.is_empty()
            && let Err(e) = dns.change_records(&zone, &changes, None)
        {
            eprintln!(
                "cumulo: servicediscovery: records not deleted: {}",
                e.message
            );
        }
    }
}
