//! Typed ACM operations, answering in the API's shape. `add_in_use_by`/`remove_in_use_by` are
//! what other services call when a resource of theirs starts or stops using a certificate.
//!
//! DNS validation: each domain of a requested certificate gets a CNAME to create
//! (`_<hash>.<domain>.` → `_<hash>.<random>.acm-validations.aws.`, the same for a domain and
//! its wildcard and, per account, for every certificate of that domain, as on AWS). A
//! certificate is ISSUED once every domain's CNAME exists, with that value, in the cumulo
//! public hosted zone that answers for it (the longest-named zone the name lies in). The check
//! runs whenever a certificate is read (DescribeCertificate, ListCertificates, GetCertificate,
//! the CloudFormation provider's wait): the `certificate_validated` waiter's next poll sees a
//! record as soon as it is written. EMAIL validation stays PENDING_VALIDATION: no mail is sent.

use super::AcmService;
use super::pem;
use super::state::{self, Certificate, DomainValidation};
use cumulo_wire::AwsError;
use md5::{Digest, Md5};
use rand::Rng;
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(e.to_string())
}

pub fn not_found(arn: &str) -> AwsError {
    AwsError::bad_request(
        "ResourceNotFoundException",
        format!("Could not find certificate {arn}."),
    )
}

fn validation(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("ValidationException", message)
}

fn now_s() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

/// Validity AWS gives an issued certificate: 395 days.
const VALIDITY_S: f64 = 395.0 * 86_400.0;

/// `arn:aws:acm:<region>:<12 digits>:certificate/<id>`, else InvalidArnException.
fn check_arn(arn: &str) -> Result<(), AwsError> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let ok = parts.len() == 6
        && parts[0] == "arn"
        && parts[2] == "acm"
        && parts[4].len() == 12
        && parts[4].chars().all(|c| c.is_ascii_digit())
        && parts[5].starts_with("certificate/");
    if ok {
        Ok(())
    } else {
        Err(AwsError::bad_request(
            "InvalidArnException",
            format!("String '{arn}' is not a valid ARN."),
        ))
    }
}

/// A domain name ACM accepts: labels of letters, digits and hyphens, an optional leading `*.`,
/// at least two labels, at most 253 characters.
pub fn valid_domain(d: &str) -> bool {
    let d = d.strip_prefix("*.").unwrap_or(d);
    let labels: Vec<&str> = d.split('.').collect();
    d.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

fn hex32(seed: &str) -> String {
    hex::encode(Md5::digest(seed.as_bytes()))
}

/// The CNAME a domain validates with for this account.
fn validation_record(account: &str, domain: &str) -> (String, String) {
    let base = domain.strip_prefix("*.").unwrap_or(domain).to_lowercase();
    let name = format!("_{}.{base}.", hex32(&format!("name:{account}:{base}")));
    let value_hash = hex32(&format!("value:{account}:{base}"));
    let tail = &hex32(&format!("tail:{account}:{base}"))[..10];
    (name, format!("_{value_hash}.{tail}.acm-validations.aws."))
}

fn serial() -> String {
    let mut rng = rand::rng();
    (0..16)
        .map(|_| format!("{:02x}", rng.random::<u8>()))
        .collect::<Vec<_>>()
        .join(":")
}

/// `RSA_2048` (the API's enum) as DescribeCertificate writes it (`RSA-2048`).
fn key_algorithm_shown(api: &str) -> String {
    api.replacen('_', "-", 1)
}

/// The input of RequestCertificate.
#[derive(Debug, Clone, Default)]
pub struct CertificateRequest {
    pub domain_name: String,
    pub subject_alternative_names: Vec<String>,
    /// DNS (default) or EMAIL.
    pub validation_method: Option<String>,
    pub idempotency_token: Option<String>,
    /// RSA_2048 (default), EC_prime256v1 or EC_secp384r1.
    pub key_algorithm: Option<String>,
    pub transparency_logging: Option<String>,
    pub tags: Vec<(String, String)>,
}

fn check_tags(tags: &[(String, String)]) -> Result<(), AwsError> {
    if let Some((k, _)) = tags.iter().find(|(k, _)| k.starts_with("aws:")) {
        return Err(AwsError::bad_request(
            "InvalidTagException",
            format!("Tag key '{k}' uses the reserved prefix aws:."),
        ));
    }
    if tags.iter().any(|(k, _)| k.is_empty() || k.len() > 128) {
        return Err(validation(
            "1 validation error detected: Value at 'tags.member.key' failed to satisfy constraint: Member must have length between 1 and 128",
        ));
    }
    Ok(())
}

impl AcmService {
    /// CertificateNotFound (ResourceNotFoundException) when absent; records `user_arn` in InUseBy.
    pub fn add_in_use_by(
        &self,
        region: &str,
        certificate_arn: &str,
        user_arn: &str,
    ) -> Result<(), AwsError> {
        self.change(region, certificate_arn, |c| {
            Ok(c.in_use_by.insert(user_arn.to_string()))
        })
    }

    pub fn remove_in_use_by(
        &self,
        region: &str,
        certificate_arn: &str,
        user_arn: &str,
    ) -> Result<(), AwsError> {
        self.change(region, certificate_arn, |c| {
            Ok(c.in_use_by.remove(user_arn))
        })
    }

    /// Applies `change` to a copy of the certificate, writing through only when it says it
    /// changed something; an error changes nothing.
    fn change(
        &self,
        region: &str,
        certificate_arn: &str,
        change: impl FnOnce(&mut Certificate) -> Result<bool, AwsError>,
    ) -> Result<(), AwsError> {
        let mut regions = self.lock();
        let cert = regions
            .get(region)
            .and_then(|certs| certs.get(certificate_arn))
            .ok_or_else(|| not_found(certificate_arn))?;
        let mut updated = cert.clone();
        if !change(&mut updated)? {
            return Ok(());
        }
        self.store
            .write(|tx| state::save(tx, region, &updated))
            .map_err(internal)?;
        regions
            .entry(region.to_string())
            .or_default()
            .insert(updated.arn.clone(), updated);
        Ok(())
    }

    fn insert(&self, region: &str, cert: Certificate) -> Result<(), AwsError> {
        let mut regions = self.lock();
        self.store
            .write(|tx| state::save(tx, region, &cert))
            .map_err(internal)?;
        regions
            .entry(region.to_string())
            .or_default()
            .insert(cert.arn.clone(), cert);
        Ok(())
    }

    /// A copy of one certificate, its DNS validation checked first.
    pub fn certificate(&self, region: &str, arn: &str) -> Result<Certificate, AwsError> {
        self.settle(region, arn)?;
        self.lock()
            .get(region)
            .and_then(|certs| certs.get(arn))
            .cloned()
            .ok_or_else(|| not_found(arn))
    }

    /// Issues a PENDING_VALIDATION DNS certificate whose every CNAME is now in Route 53.
    fn settle(&self, region: &str, arn: &str) -> Result<(), AwsError> {
        let Some(dns) = &self.route53 else {
            return Ok(());
        };
        let pending = self
            .lock()
            .get(region)
            .and_then(|c| c.get(arn))
            .filter(|c| c.status == "PENDING_VALIDATION" && c.validation_method == "DNS")
            .map(|c| c.validations.clone());
        let Some(validations) = pending else {
            return Ok(());
        };
        let done: Vec<bool> = validations
            .iter()
            .map(|v| dns.has_public_cname(&v.record_name, &v.record_value))
            .collect();
        if done.iter().all(|d| !d) {
            return Ok(());
        }
        self.change(region, arn, |c| {
            if c.status != "PENDING_VALIDATION" {
                return Ok(false);
            }
            for (v, ok) in c.validations.iter_mut().zip(&done) {
                if *ok {
                    v.status = "SUCCESS".into();
                }
            }
            if c.validations.iter().all(|v| v.status == "SUCCESS") {
                let now = now_s();
                c.status = "ISSUED".into();
                c.issued_at = Some(now);
                c.not_before = Some(now);
                c.not_after = Some(now + VALIDITY_S);
                c.serial = Some(serial());
                c.key_usages = vec!["DIGITAL_SIGNATURE".into(), "KEY_ENCIPHERMENT".into()];
                c.extended_key_usages = vec![
                    (
                        "TLS_WEB_SERVER_AUTHENTICATION".into(),
                        "1.3.6.1.5.5.7.3.1".into(),
                    ),
                    (
                        "TLS_WEB_CLIENT_AUTHENTICATION".into(),
                        "1.3.6.1.5.5.7.3.2".into(),
                    ),
                ];
            }
            Ok(true)
        })
    }

    /// RequestCertificate: the ARN (an earlier one for a repeated IdempotencyToken with the
    /// same names).
    pub fn request_certificate(
        &self,
        region: &str,
        req: CertificateRequest,
    ) -> Result<String, AwsError> {
        let domain = req.domain_name.trim_end_matches('.').to_lowercase();
        if !valid_domain(&domain) {
            return Err(validation(format!(
                "1 validation error detected: Value '{}' at 'domainName' failed to satisfy constraint: Member must satisfy regular expression pattern: ^(\\*\\.)?(((?!-)[A-Za-z0-9-]{{0,62}}[A-Za-z0-9])\\.)+((?!-)[A-Za-z0-9-]{{1,62}}[A-Za-z0-9])$",
                req.domain_name
            )));
        }
        let method = req
            .validation_method
            .clone()
            .unwrap_or_else(|| "DNS".into());
        if method != "DNS" && method != "EMAIL" {
            return Err(validation(format!(
                "1 validation error detected: Value '{method}' at 'validationMethod' failed to satisfy constraint: Member must satisfy enum value set: [EMAIL, DNS, HTTP]"
            )));
        }
        let key = req
            .key_algorithm
            .clone()
            .unwrap_or_else(|| "RSA_2048".into());
        if !matches!(key.as_str(), "RSA_2048" | "EC_prime256v1" | "EC_secp384r1") {
            return Err(validation(format!(
                "The key algorithm {key} is not supported for RequestCertificate. Supported algorithms: RSA_2048, EC_prime256v1, EC_secp384r1."
            )));
        }
        let mut names = vec![domain.clone()];
        for s in &req.subject_alternative_names {
            let s = s.trim_end_matches('.').to_lowercase();
            if !valid_domain(&s) {
                return Err(validation(format!(
                    "1 validation error detected: Value '[{s}]' at 'subjectAlternativeNames' failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy regular expression pattern: ^(\\*\\.)?(((?!-)[A-Za-z0-9-]{{0,62}}[A-Za-z0-9])\\.)+((?!-)[A-Za-z0-9-]{{1,62}}[A-Za-z0-9])$]"
                )));
            }
            if !names.contains(&s) {
                names.push(s);
            }
        }
        if names.len() > 100 {
            return Err(AwsError::bad_request(
                "LimitExceededException",
                "Cannot issue certificate with more than 100 subject alternative names.",
            ));
        }
        check_tags(&req.tags)?;
        if let Some(token) = &req.idempotency_token {
            let now = now_s();
            let same = self.lock().get(region).and_then(|certs| {
                certs
                    .values()
                    .find(|c| {
                        c.idempotency_token.as_deref() == Some(token)
                            && c.subject_alternative_names == names
                            && now - c.created_at < 3600.0
                    })
                    .map(|c| c.arn.clone())
            });
            if let Some(arn) = same {
                return Ok(arn);
            }
        }
        let arn = self.certificate_arn(region, &uuid::Uuid::new_v4().to_string());
        let validations = names
            .iter()
            .map(|d| {
                let (record_name, record_value) = validation_record(&self.account_id, d);
                DomainValidation {
                    domain_name: d.clone(),
                    validation_domain: d.clone(),
                    record_name,
                    record_value,
                    status: "PENDING_VALIDATION".into(),
                }
            })
            .collect();
        let signature = if key.starts_with("EC_secp384") {
            "SHA384WITHECDSA"
        } else if key.starts_with("EC") {
            "SHA256WITHECDSA"
        } else {
            "SHA256WITHRSA"
        };
        let cert = Certificate {
            arn: arn.clone(),
            domain_name: domain.clone(),
            subject_alternative_names: names,
            status: "PENDING_VALIDATION".into(),
            cert_type: "AMAZON_ISSUED".into(),
            created_at: now_s(),
            tags: req.tags.into_iter().collect(),
            validation_method: method,
            key_algorithm: key_algorithm_shown(&key),
            idempotency_token: req.idempotency_token,
            validations,
            subject: format!("CN={domain}"),
            issuer: "Amazon".into(),
            signature_algorithm: signature.into(),
            transparency_logging: req.transparency_logging.unwrap_or_else(|| "ENABLED".into()),
            ..Default::default()
        };
        self.insert(region, cert)?;
        Ok(arn)
    }

    /// ImportCertificate: a new certificate, or the one `reimport` names with new material
    /// (its ARN, tags and InUseBy kept).
    pub fn import_certificate(
        &self,
        region: &str,
        certificate: &[u8],
        private_key: &[u8],
        chain: Option<&[u8]>,
        reimport: Option<&str>,
        tags: Vec<(String, String)>,
    ) -> Result<String, AwsError> {
        let parsed = pem::parse(certificate).map_err(|e| validation(e.to_string()))?;
        if !pem::has_private_key(private_key) {
            return Err(validation("The private key is not supported."));
        }
        if let Some(c) = chain
            && pem::blocks(c, "CERTIFICATE")
                .map(|b| b.is_empty())
                .unwrap_or(true)
        {
            return Err(validation(
                "Could not validate the certificate with the certificate chain.",
            ));
        }
        check_tags(&tags)?;
        let now = now_s();
        let fill = |c: &mut Certificate| {
            c.domain_name = parsed.domain_name.clone();
            c.subject_alternative_names = parsed.subject_alternative_names.clone();
            c.subject = parsed.subject.clone();
            c.issuer = parsed.issuer.clone();
            c.serial = Some(parsed.serial.clone());
            c.not_before = Some(parsed.not_before);
            c.not_after = Some(parsed.not_after);
            c.key_algorithm = parsed.key_algorithm.clone();
            c.signature_algorithm = parsed.signature_algorithm.clone();
            c.key_usages = parsed.key_usages.clone();
            c.extended_key_usages = parsed.extended_key_usages.clone();
            c.imported_at = Some(now);
            c.status = if parsed.not_after < now {
                "EXPIRED"
            } else {
                "ISSUED"
            }
            .into();
            c.certificate_pem = Some(String::from_utf8_lossy(certificate).into_owned());
            c.chain_pem = chain.map(|c| String::from_utf8_lossy(c).into_owned());
            c.validations = parsed
                .subject_alternative_names
                .iter()
                .map(|d| DomainValidation {
                    domain_name: d.clone(),
                    ..DomainValidation::imported()
                })
                .collect();
        };
        if let Some(arn) = reimport {
            check_arn(arn)?;
            self.change(region, arn, |c| {
                if c.cert_type != "IMPORTED" {
                    return Err(validation(format!(
                        "Certificate {arn} is not an imported certificate and cannot be reimported."
                    )));
                }
                if !tags.is_empty() {
                    return Err(validation(
                        "You cannot add tags when reimporting a certificate.",
                    ));
                }
                fill(c);
                Ok(true)
            })?;
            return Ok(arn.to_string());
        }
        let arn = self.certificate_arn(region, &uuid::Uuid::new_v4().to_string());
        let mut cert = Certificate {
            arn: arn.clone(),
            cert_type: "IMPORTED".into(),
            created_at: now,
            tags: tags.into_iter().collect(),
            transparency_logging: "DISABLED".into(),
            ..Default::default()
        };
        fill(&mut cert);
        self.insert(region, cert)?;
        Ok(arn)
    }

    /// DeleteCertificate: ResourceInUseException while a resource uses it.
    pub fn delete_certificate(&self, region: &str, arn: &str) -> Result<(), AwsError> {
        check_arn(arn)?;
        let mut regions = self.lock();
        let cert = regions
            .get(region)
            .and_then(|c| c.get(arn))
            .ok_or_else(|| not_found(arn))?;
        if !cert.in_use_by.is_empty() {
            return Err(AwsError::bad_request(
                "ResourceInUseException",
                format!(
                    "Certificate {arn} in account {} is in use.",
                    self.account_id
                ),
            ));
        }
        self.store
            .write(|tx| state::delete(tx, region, arn))
            .map_err(internal)?;
        if let Some(certs) = regions.get_mut(region) {
            certs.remove(arn);
        }
        Ok(())
    }

    pub fn describe_certificate(&self, region: &str, arn: &str) -> Result<Value, AwsError> {
        check_arn(arn)?;
        let c = self.certificate(region, arn)?;
        Ok(json!({"Certificate": detail_json(&c)}))
    }

    /// GetCertificate: the PEM material of an imported certificate. An Amazon-issued one is
    /// answered RequestInProgressException until it is issued; after that cumulo has no
    /// certificate authority to sign material with, and says so.
    pub fn get_certificate(&self, region: &str, arn: &str) -> Result<Value, AwsError> {
        check_arn(arn)?;
        let c = self.certificate(region, arn)?;
        if c.status == "PENDING_VALIDATION" {
            return Err(AwsError::bad_request(
                "RequestInProgressException",
                format!("Certificate {arn} is not yet issued."),
            ));
        }
        match &c.certificate_pem {
            Some(pem) => {
                let mut out = json!({"Certificate": pem});
                if let Some(chain) = &c.chain_pem {
                    out["CertificateChain"] = json!(chain);
                }
                Ok(out)
            }
            None => Err(AwsError::new(
                http::StatusCode::NOT_IMPLEMENTED,
                "NotImplemented",
                "cumulo: ACM GetCertificate of an Amazon-issued certificate is not implemented (cumulo signs no certificate material)",
            )),
        }
    }

    /// ListCertificates: by default only RSA_1024/RSA_2048 keys, as AWS; statuses and
    /// Includes filters; paged by NextToken (the ARN to resume at).
    pub fn list_certificates(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let arns: Vec<String> = self
            .lock()
            .get(region)
            .map(|c| c.keys().cloned().collect())
            .unwrap_or_default();
        for arn in &arns {
            self.settle(region, arn)?;
        }
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let statuses = strings(input.get("CertificateStatuses"));
        let includes = input.get("Includes").cloned().unwrap_or(Value::Null);
        let mut key_types = strings(includes.get("keyTypes"));
        if key_types.is_empty() {
            key_types = vec!["RSA_1024".into(), "RSA_2048".into()];
        }
        let key_types: Vec<String> = key_types.iter().map(|k| key_algorithm_shown(k)).collect();
        let key_usage = strings(includes.get("keyUsage"));
        let extended = strings(includes.get("extendedKeyUsage"));
        let max = match input.get("MaxItems") {
            None => 1000,
            Some(v) => match v.as_u64() {
                Some(n @ 1..=1000) => n as usize,
                _ => {
                    return Err(validation(format!(
                        "1 validation error detected: Value '{v}' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and 1000"
                    )));
                }
            },
        };
        let token = input.get("NextToken").and_then(Value::as_str);
        let regions = self.lock();
        let mut all: Vec<&Certificate> = regions
            .get(region)
            .map(|c| c.values().collect())
            .unwrap_or_default();
        all.sort_by(|a, b| {
            a.created_at
                .total_cmp(&b.created_at)
                .then(a.arn.cmp(&b.arn))
        });
        let all: Vec<&Certificate> = all
            .into_iter()
            .filter(|c| statuses.is_empty() || statuses.contains(&c.status))
            .filter(|c| key_types.contains(&c.key_algorithm))
            .filter(|c| {
                key_usage
                    .iter()
                    .all(|k| k == "ANY" || c.key_usages.contains(k))
            })
            .filter(|c| {
                extended
                    .iter()
                    .all(|k| k == "ANY" || c.extended_key_usages.iter().any(|(n, _)| n == k))
            })
            .collect();
        let start = match token {
            Some(t) => all.iter().position(|c| c.arn == t).ok_or_else(|| {
                AwsError::bad_request("InvalidArgsException", "The NextToken is not valid.")
            })?,
            None => 0,
        };
        let page: Vec<Value> = all
            .iter()
            .skip(start)
            .take(max)
            .map(|c| summary_json(c))
            .collect();
        let mut out = json!({"CertificateSummaryList": page});
        if let Some(next) = all.get(start + max) {
            out["NextToken"] = json!(next.arn);
        }
        Ok(out)
    }

    pub fn add_tags(
        &self,
        region: &str,
        arn: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        check_arn(arn)?;
        check_tags(tags)?;
        self.change(region, arn, |c| {
            for (k, v) in tags {
                c.tags.insert(k.clone(), v.clone());
            }
            if c.tags.len() > 50 {
                return Err(AwsError::bad_request(
                    "TooManyTagsException",
                    "the TagSet: {...} contains too many Tags. A resource may have no more than 50 tags.",
                ));
            }
            Ok(true)
        })
    }

    /// RemoveTagsFromCertificate: a tag given with a value is removed only when it has it.
    pub fn remove_tags(
        &self,
        region: &str,
        arn: &str,
        tags: &[(String, Option<String>)],
    ) -> Result<(), AwsError> {
        check_arn(arn)?;
        self.change(region, arn, |c| {
            for (k, v) in tags {
                if v.as_ref().is_none_or(|v| c.tags.get(k) == Some(v)) {
                    c.tags.remove(k);
                }
            }
            Ok(true)
        })
    }

    pub fn tags(&self, region: &str, arn: &str) -> Result<BTreeMap<String, String>, AwsError> {
        check_arn(arn)?;
        Ok(self.certificate(region, arn)?.tags)
    }

    /// RenewCertificate: only an issued Amazon certificate is eligible; its managed renewal
    /// has nothing to do locally.
    pub fn renew_certificate(&self, region: &str, arn: &str) -> Result<(), AwsError> {
        check_arn(arn)?;
        let c = self.certificate(region, arn)?;
        if c.cert_type != "AMAZON_ISSUED" || c.status != "ISSUED" {
            return Err(validation(format!(
                "Certificate {arn} is not eligible for renewal."
            )));
        }
        Ok(())
    }

    /// ResendValidationEmail: only for a pending EMAIL-validated certificate and one of its
    /// domains; no mail leaves cumulo.
    pub fn resend_validation_email(
        &self,
        region: &str,
        arn: &str,
        domain: &str,
        validation_domain: &str,
    ) -> Result<(), AwsError> {
        check_arn(arn)?;
        let c = self.certificate(region, arn)?;
        if c.validation_method != "EMAIL" || c.status != "PENDING_VALIDATION" {
            return Err(AwsError::bad_request(
                "InvalidStateException",
                format!(
                    "Certificate {arn} is not in a state where a validation email can be resent."
                ),
            ));
        }
        if !c.subject_alternative_names.iter().any(|d| d == domain)
            || !(validation_domain == domain || domain.ends_with(&format!(".{validation_domain}")))
        {
            return Err(AwsError::bad_request(
                "InvalidDomainValidationOptionsException",
                format!(
                    "The domain {domain} or validation domain {validation_domain} is not valid for certificate {arn}."
                ),
            ));
        }
        Ok(())
    }
}

impl DomainValidation {
    fn imported() -> DomainValidation {
        DomainValidation {
            domain_name: String::new(),
            validation_domain: String::new(),
            record_name: String::new(),
            record_value: String::new(),
            status: String::new(),
        }
    }
}

fn ts(v: Option<f64>) -> Value {
    v.map(|x| json!(x)).unwrap_or(Value::Null)
}

/// DescribeCertificate's `Certificate`.
pub fn detail_json(c: &Certificate) -> Value {
    // An imported certificate's names are described sorted, though its summary keeps the
    // certificate's order (as recorded against AWS, aws-recordings/acm).
    let mut names = c.subject_alternative_names.clone();
    let mut validations: Vec<&DomainValidation> = c.validations.iter().collect();
    if c.cert_type == "IMPORTED" {
        names.sort();
        validations.sort_by(|a, b| a.domain_name.cmp(&b.domain_name));
    }
    let dvo: Vec<Value> = validations
        .into_iter()
        .map(|v| {
            if c.cert_type == "IMPORTED" {
                return json!({"DomainName": v.domain_name});
            }
            let mut o = json!({
                "DomainName": v.domain_name,
                "ValidationDomain": v.validation_domain,
                "ValidationStatus": v.status,
                "ValidationMethod": c.validation_method,
            });
            if c.validation_method == "DNS" {
                o["ResourceRecord"] =
                    json!({"Name": v.record_name, "Type": "CNAME", "Value": v.record_value});
            } else {
                o["ValidationEmails"] = json!([]);
            }
            o
        })
        .collect();
    let mut out = json!({
        "CertificateArn": c.arn,
        "DomainName": c.domain_name,
        "SubjectAlternativeNames": names,
        "DomainValidationOptions": dvo,
        "Subject": c.subject,
        "Issuer": c.issuer,
        "CreatedAt": c.created_at,
        "Status": c.status,
        "KeyAlgorithm": c.key_algorithm,
        "SignatureAlgorithm": c.signature_algorithm,
        "InUseBy": c.in_use_by,
        "Type": c.cert_type,
        "KeyUsages": c.key_usages.iter().map(|k| json!({"Name": k})).collect::<Vec<_>>(),
        "ExtendedKeyUsages": c
            .extended_key_usages
            .iter()
            .map(|(n, o)| json!({"Name": n, "OID": o}))
            .collect::<Vec<_>>(),
        "RenewalEligibility": renewal(c),
        "Options": {"CertificateTransparencyLoggingPreference": c.transparency_logging, "Export": "DISABLED"},
    });
    for (k, v) in [
        ("IssuedAt", ts(c.issued_at)),
        ("ImportedAt", ts(c.imported_at)),
        ("NotBefore", ts(c.not_before)),
        ("NotAfter", ts(c.not_after)),
        (
            "Serial",
            c.serial.clone().map(Value::from).unwrap_or(Value::Null),
        ),
    ] {
        if !v.is_null() {
            out[k] = v;
        }
    }
    out
}

fn renewal(c: &Certificate) -> &'static str {
    if c.cert_type == "AMAZON_ISSUED" && c.status == "ISSUED" && !c.in_use_by.is_empty() {
        "ELIGIBLE"
    } else {
        "INELIGIBLE"
    }
}

/// ListCertificates' summary of one certificate.
fn summary_json(c: &Certificate) -> Value {
    let mut out = json!({
        "CertificateArn": c.arn,
        "DomainName": c.domain_name,
        "SubjectAlternativeNameSummaries": c.subject_alternative_names,
        "HasAdditionalSubjectAlternativeNames": false,
        "Status": c.status,
        "Type": c.cert_type,
        "KeyAlgorithm": c.key_algorithm,
        "KeyUsages": c.key_usages,
        "ExtendedKeyUsages": c.extended_key_usages.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
        "InUse": !c.in_use_by.is_empty(),
        "ExportOption": "DISABLED",
        "RenewalEligibility": renewal(c),
        "CreatedAt": c.created_at,
    });
    // AWS says whether an Amazon-issued certificate was exported; an imported one's summary
    // has no `Exported` (as recorded against AWS, aws-recordings/acm).
    if c.cert_type == "AMAZON_ISSUED" {
        out["Exported"] = json!(false);
    }
    for (k, v) in [
        ("IssuedAt", ts(c.issued_at)),
        ("ImportedAt", ts(c.imported_at)),
        ("NotBefore", ts(c.not_before)),
        ("NotAfter", ts(c.not_after)),
    ] {
        if !v.is_null() {
            out[k] = v;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::state::Certificate;
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    #[test]
    fn in_use_by_is_recorded_and_removed_and_unknown_certificates_are_not_found() {
        let svc = AcmService::new(
            Arc::new(Store::in_memory().expect("store")),
            &Config::default(),
        )
        .expect("service");
        let arn = svc.certificate_arn("us-east-1", "c1");
        let e = svc
            .add_in_use_by("us-east-1", &arn, "arn:lb")
            .expect_err("absent");
        assert_eq!(e.code, "ResourceNotFoundException");
        let cert = Certificate {
            arn: arn.clone(),
            domain_name: "example.com".into(),
            subject_alternative_names: vec!["example.com".into()],
            status: "ISSUED".into(),
            cert_type: "AMAZON_ISSUED".into(),
            ..Default::default()
        };
        svc.insert("us-east-1", cert).expect("saved");
        svc.add_in_use_by("us-east-1", &arn, "arn:lb")
            .expect("added");
        svc.add_in_use_by("us-east-1", &arn, "arn:lb")
            .expect("idempotent");
        let got = svc.certificate("us-east-1", &arn).expect("cert");
        assert_eq!(got.in_use_by.len(), 1);
        assert_eq!(
            svc.delete_certificate("us-east-1", &arn)
                .map_err(|e| e.code),
            Err("ResourceInUseException".to_string())
        );
        svc.remove_in_use_by("us-east-1", &arn, "arn:lb")
            .expect("removed");
        assert!(
            svc.certificate("us-east-1", &arn)
                .expect("cert")
                .in_use_by
                .is_empty()
        );
        assert!(svc.certificate("eu-west-1", &arn).is_err());
        svc.delete_certificate("us-east-1", &arn).expect("deleted");
    }

    #[test]
    fn validation_records_are_shared_by_a_domain_and_its_wildcard() {
        let (n1, v1) = validation_record("123456789012", "example.com");
        let (n2, v2) = validation_record("123456789012", "*.example.com");
        assert_eq!((n1.clone(), v1.clone()), (n2, v2));
        assert!(n1.starts_with('_') && n1.ends_with(".example.com."), "{n1}");
        assert!(v1.ends_with(".acm-validations.aws."), "{v1}");
        assert_ne!(validation_record("123456789012", "other.com").0, n1);
    }

    #[test]
    fn domains_are_checked_as_acm_does() {
        assert!(valid_domain("example.com"));
        assert!(valid_domain("*.example.com"));
        assert!(!valid_domain("com"));
        assert!(!valid_domain("-bad.example.com"));
        assert!(!valid_domain("a..com"));
        assert!(check_arn("arn:aws:acm:us-east-1:123456789012:certificate/x").is_ok());
        assert!(check_arn("nope").is_err());
    }
}
