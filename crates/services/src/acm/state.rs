//! Certificates in memory per region, each written through to the store as one document.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE acm_certificates (
        region TEXT NOT NULL,
        arn TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, arn)
    );"];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    pub arn: String,
    pub domain_name: String,
    pub subject_alternative_names: Vec<String>,
    /// `PENDING_VALIDATION`, `ISSUED`, ...
    pub status: String,
    /// `AMAZON_ISSUED` or `IMPORTED`.
    pub cert_type: String,
    /// Seconds since the epoch.
    pub created_at: f64,
    /// ARNs of the resources using the certificate, as `InUseBy` lists them.
    pub in_use_by: BTreeSet<String>,
    pub tags: BTreeMap<String, String>,
    /// DNS, EMAIL, or empty for an imported certificate.
    #[serde(default)]
    pub validation_method: String,
    /// As DescribeCertificate shows it: `RSA-2048`, `EC-prime256v1`, ...
    #[serde(default = "rsa_2048")]
    pub key_algorithm: String,
    #[serde(default)]
    pub idempotency_token: Option<String>,
    /// One per domain (the domain name and each SAN), in the order AWS lists them.
    #[serde(default)]
    pub validations: Vec<DomainValidation>,
    #[serde(default)]
    pub issued_at: Option<f64>,
    #[serde(default)]
    pub imported_at: Option<f64>,
    #[serde(default)]
    pub not_before: Option<f64>,
    #[serde(default)]
    pub not_after: Option<f64>,
    #[serde(default)]
    pub serial: Option<String>,
    #[serde(default)]
    pub subject: String,
    #[serde(default)]
    pub issuer: String,
    #[serde(default)]
    pub signature_algorithm: String,
    #[serde(default)]
    pub key_usages: Vec<String>,
    /// `(name, OID)` of each extended key usage.
    #[serde(default)]
    pub extended_key_usages: Vec<(String, String)>,
    /// CertificateTransparencyLoggingPreference.
    #[serde(default)]
    pub transparency_logging: String,
    /// Imported PEM material (certificate, chain); the private key is not kept.
    #[serde(default)]
    pub certificate_pem: Option<String>,
    #[serde(default)]
    pub chain_pem: Option<String>,
}

fn rsa_2048() -> String {
    "RSA-2048".to_string()
}

/// One domain's validation: the CNAME AWS asks for (DNS) and where it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainValidation {
    pub domain_name: String,
    pub validation_domain: String,
    /// `_<hash>.<domain>.`
    pub record_name: String,
    /// `_<hash>.<random>.acm-validations.aws.`
    pub record_value: String,
    /// PENDING_VALIDATION, SUCCESS or FAILED.
    pub status: String,
}

pub type Regions = HashMap<String, BTreeMap<String, Certificate>>;

pub fn load(c: &Connection) -> rusqlite::Result<(Regions, Vec<String>)> {
    let mut regions: Regions = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT region, arn, doc FROM acm_certificates")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (region, arn, doc) = row?;
        match serde_json::from_str::<Certificate>(&doc) {
            Ok(cert) => {
                regions.entry(region).or_default().insert(arn, cert);
            }
            Err(e) => problems.push(format!("certificate {arn}: {e}")),
        }
    }
    Ok((regions, problems))
}

pub fn save(tx: &Transaction<'_>, region: &str, cert: &Certificate) -> rusqlite::Result<()> {
    let doc = serde_json::to_string(cert)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    tx.execute(
        "INSERT OR REPLACE INTO acm_certificates(region, arn, doc) VALUES (?1, ?2, ?3)",
        params![region, cert.arn, doc],
    )?;
    Ok(())
}

pub fn delete(tx: &Transaction<'_>, region: &str, arn: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM acm_certificates WHERE region = ?1 AND arn = ?2",
        params![region, arn],
    )?;
    Ok(())
}
