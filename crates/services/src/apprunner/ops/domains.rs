//! Custom domains of a service. An association reports the certificate validation CNAMEs App
//! Runner asks for (one per name: the domain and, with EnableWWWSubdomain, `www.`), formed as
//! ACM forms them, and DNSTarget, the service's URL host.
//!
//! The association is PENDING_CERTIFICATE_DNS_VALIDATION until every validation CNAME is in the
//! public cumulo hosted zone that answers for its name (as ACM decides for its certificates);
//! then each record is SUCCESS and the domain ACTIVE, checked whenever it is read.

use super::{
    AppRunnerService, body, check_pattern, internal, invalid, not_found, now, page, with_token,
};
use crate::apprunner::state::{self, AppService, CustomDomain, Doc, Region};
use cumulo_wire::AwsError;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const DOMAIN_PATTERN: &str = r"[A-Za-z0-9*.-]{1,255}";

/// The validation CNAME for one name: `_<32 hex>.<name>.` → `_<32 hex>.<10 chars>.acm-validations.aws.`,
/// derived from the service and the name so every describe reports the same record.
fn validation_record(service_id: &str, name: &str) -> Value {
    let digest = hex::encode(Sha256::digest(format!("{service_id}/{name}")));
    let (label, rest) = digest.split_at(32);
    let target: String = rest
        .bytes()
        .take(10)
        .map(|b| (b'a' + (b % 26)) as char)
        .collect();
    json!({
        "Name": format!("_{label}.{name}."),
        "Type": "CNAME",
        "Value": format!("_{}.{target}.acm-validations.aws.", &rest[..32.min(rest.len())]),
        "Status": "PENDING_VALIDATION",
    })
}

const PENDING: &str = "PENDING_CERTIFICATE_DNS_VALIDATION";

fn domain_json(
    dns: Option<&crate::route53::Route53Service>,
    s: &AppService,
    d: &CustomDomain,
    status: &str,
) -> Value {
    let mut records = vec![validation_record(&s.id, &d.name)];
    if d.www {
        records.push(validation_record(&s.id, &format!("www.{}", d.name)));
    }
    let mut status = status;
    if let (Some(dns), PENDING) = (dns, status) {
        for r in &mut records {
            let (name, value) = (
                r["Name"].as_str().unwrap_or(""),
                r["Value"].as_str().unwrap_or(""),
            );
            if dns.has_public_cname(name, value) {
                r["Status"] = "SUCCESS".into();
            }
        }
        if records.iter().all(|r| r["Status"] == "SUCCESS") {
            status = "ACTIVE";
        }
    }
    json!({
        "DomainName": d.name,
        "EnableWWWSubdomain": d.www,
        "CertificateValidationRecords": records,
        "Status": status,
    })
}

impl AppRunnerService {
    fn vpc_dns_targets(&self, r: &Region, arn: &str) -> Vec<Value> {
        r.ingress
            .iter()
            .filter(|(_, i)| i.service_arn == arn && i.deleted_at.is_none())
            .map(|(a, i)| {
                json!({"VpcIngressConnectionArn": a, "VpcId": i.vpc_id, "DomainName": i.domain_name})
            })
            .collect()
    }

    fn commit_domains(
        &self,
        r: &mut Region,
        region: &str,
        arn: &str,
        s: AppService,
    ) -> Result<(), AwsError> {
        self.store
            .write(|tx| state::save(tx, region, arn, Doc::Service(&s)))
            .map_err(internal)?;
        r.services.insert(arn.to_string(), s);
        Ok(())
    }

    pub fn associate_custom_domain(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let b = body(input)?;
        let arn = b.str("ServiceArn")?;
        let name = b.str("DomainName")?;
        check_pattern("DomainName", &name, DOMAIN_PATTERN)?;
        let www = b.opt_bool("EnableWWWSubdomain")?.unwrap_or(true);
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let mut s = Self::live_service(r, &arn, now)?.clone();
        if s.domains.iter().any(|d| d.name.eq_ignore_ascii_case(&name)) {
            return Err(invalid(format!(
                "Domain {name} is already associated with service {arn}"
            )));
        }
        let d = CustomDomain { name, www };
        let out = domain_json(self.route53.as_deref(), &s, &d, PENDING);
        s.domains.push(d);
        let target = s.url.clone();
        self.commit_domains(r, region, &arn, s)?;
        Ok(
            json!({"DNSTarget": target, "ServiceArn": arn, "CustomDomain": out,
                  "VpcDNSTargets": self.vpc_dns_targets(r, &arn)}),
        )
    }

    pub fn describe_custom_domains(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let b = body(input)?;
        let arn = b.str("ServiceArn")?;
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let s = Self::live_service(r, &arn, now())?;
        let all: Vec<Value> = s
            .domains
            .iter()
            .map(|d| domain_json(self.route53.as_deref(), s, d, PENDING))
            .collect();
        let (items, token) = page(&b, &all, 5)?;
        Ok(with_token(
            json!({"DNSTarget": s.url, "ServiceArn": arn, "CustomDomains": items,
                   "VpcDNSTargets": self.vpc_dns_targets(r, &arn)}),
            token,
        ))
    }

    pub fn disassociate_custom_domain(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let b = body(input)?;
        let arn = b.str("ServiceArn")?;
        let name = b.str("DomainName")?;
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let mut s = Self::live_service(r, &arn, now())?.clone();
        let at = s
            .domains
            .iter()
            .position(|d| d.name.eq_ignore_ascii_case(&name))
            .ok_or_else(|| {
                not_found(format!(
                    "Domain {name} is not associated with service {arn}"
                ))
            })?;
        let d = s.domains.remove(at);
        let out = domain_json(None, &s, &d, "DELETING");
        let target = s.url.clone();
        self.commit_domains(r, region, &arn, s)?;
        Ok(
            json!({"DNSTarget": target, "ServiceArn": arn, "CustomDomain": out,
                  "VpcDNSTargets": self.vpc_dns_targets(r, &arn)}),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_records_are_stable_acm_shaped_cnames() {
        let a = validation_record("abc", "example.com");
        assert_eq!(a, validation_record("abc", "example.com"));
        let name = a["Name"].as_str().unwrap();
        assert!(
            name.starts_with('_') && name.ends_with(".example.com."),
            "{name}"
        );
        assert_eq!(name.len(), 1 + 32 + ".example.com.".len());
        let value = a["Value"].as_str().unwrap();
        assert!(value.ends_with(".acm-validations.aws."), "{value}");
        assert_ne!(a, validation_record("abd", "example.com"));
    }
}
