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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
