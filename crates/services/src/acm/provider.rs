//! AWS::CertificateManager::Certificate: requests the certificate, then waits for ISSUED as
//! CloudFormation does. For each DomainValidationOptions entry that names a HostedZoneId,
//! CloudFormation writes the validation CNAME into that zone itself (an UPSERT, so a record a
//! sibling certificate of the same domain wrote is reused) and, as on AWS, leaves it there when
//! the certificate is deleted (a stack that also holds the zone then fails to delete it with
//! HostedZoneNotEmpty, which is AWS's behaviour).
//!
//! A domain without a HostedZoneId validates only when someone writes its CNAME (shown in the
//! status reason) into a cumulo public zone. AWS waits up to 72 hours for that; locally the
//! resource waits `UNVALIDATED_WAIT` and then fails with the records still missing, since on a
//! local endpoint nobody else is going to write them unless the user does it meanwhile. EMAIL
//! validation never completes locally (no mail is sent) and fails the same way.
//!
//! Ref and GetAtt Id are the certificate's ARN.

use super::AcmService;
use super::ops::CertificateRequest;
use crate::providers::declared::{
    self, Answer, Declared, Made, after_create, refuse_other_changes,
};
use crate::providers::system_tags::system_tags;
use crate::providers::{ProviderServices, list, required, scalar, tags};
use crate::route53::Route53Service;
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// How long a certificate whose validation records nobody writes for it waits before failing.
const UNVALIDATED_WAIT: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(200);

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    declared::register(
        r,
        Cert {
            acm: s.acm.clone(),
            dns: s.route53.clone(),
        },
    );
}

struct Cert {
    acm: Arc<AcmService>,
    dns: Arc<Route53Service>,
}

fn strings(props: &Map<String, Value>, key: &str) -> Result<Vec<String>, ProviderError> {
    list(props, key)?
        .iter()
        .map(|v| {
            crate::providers::scalar_value(v).ok_or_else(|| {
                ProviderError::Failed(format!(
                    "Properties validation failed for resource with message: #/{key}: expected type: String"
                ))
            })
        })
        .collect()
}

/// `(DomainName, HostedZoneId)` of each DomainValidationOptions entry naming a zone.
fn zones(props: &Map<String, Value>) -> Result<Vec<(String, String)>, ProviderError> {
    let mut out = Vec::new();
    for o in list(props, "DomainValidationOptions")? {
        let o = o.as_object().ok_or_else(|| {
            ProviderError::Failed(
                "Properties validation failed for resource with message: #/DomainValidationOptions: expected type: JSONObject".into(),
            )
        })?;
        crate::providers::check_known(
            "AWS::CertificateManager::Certificate",
            o,
            &["DomainName", "HostedZoneId", "ValidationDomain"],
            &[],
        )?;
        let domain = required(o, "DomainName")?;
        if let Some(zone) = scalar(o, "HostedZoneId")? {
            out.push((domain.to_lowercase(), zone));
        }
    }
    Ok(out)
}

impl Cert {
    /// Writes the validation records CloudFormation writes, then waits for ISSUED.
    async fn validate(
        &self,
        ctx: &ProviderContext,
        arn: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let zones = zones(props)?;
        let cert = self.acm.certificate(&ctx.region, arn)?;
        if cert.validation_method == "DNS" {
            for v in &cert.validations {
                let base = v.domain_name.strip_prefix("*.").unwrap_or(&v.domain_name);
                let zone = zones.iter().find(|(d, _)| {
                    d == &v.domain_name || d.strip_prefix("*.").unwrap_or(d) == base
                });
                if let Some((_, zone)) = zone {
                    self.dns.upsert_record(
                        zone,
                        &v.record_name,
                        "CNAME",
                        300,
                        std::slice::from_ref(&v.record_value),
                    )?;
                }
            }
        }
        let started = tokio::time::Instant::now();
        loop {
            let cert = self.acm.certificate(&ctx.region, arn)?;
            if cert.status == "ISSUED" {
                return Ok(());
            }
            if cert.status != "PENDING_VALIDATION" || started.elapsed() >= UNVALIDATED_WAIT {
                let missing: Vec<String> = cert
                    .validations
                    .iter()
                    .filter(|v| v.status != "SUCCESS")
                    .map(|v| {
                        if cert.validation_method == "DNS" {
                            format!(
                                "{{Name: {},Type: CNAME,Value: {}}}",
                                v.record_name, v.record_value
                            )
                        } else {
                            format!("{} (EMAIL: cumulo sends no mail)", v.domain_name)
                        }
                    })
                    .collect();
                return Err(ProviderError::Failed(format!(
                    "Resource handler returned message: \"Certificate {arn} is {} after {} s: cumulo: no validation record was found for {}\" (RequestToken: {}, HandlerErrorCode: NotStabilized)",
                    cert.status,
                    started.elapsed().as_secs(),
                    missing.join(", "),
                    ctx.client_request_token
                ))
                .into());
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

#[async_trait::async_trait]
impl Declared for Cert {
    const ATTRIBUTES: &'static [&'static str] = &["Id"];
    const TYPE: &'static str = "AWS::CertificateManager::Certificate";
    const SERVICE: &'static str = "Acm";
    const PROPERTIES: &'static [&'static str] = &[
        "CertificateTransparencyLoggingPreference",
        "DomainName",
        "DomainValidationOptions",
        "KeyAlgorithm",
        "SubjectAlternativeNames",
        "Tags",
        "ValidationMethod",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "CertificateAuthorityArn",
            "cumulo does not emulate AWS Private Certificate Authority",
        ),
        (
            "CertificateExport",
            "cumulo exports no certificate material",
        ),
    ];
    const NOT_FOUND: &'static [&'static str] = &["ResourceNotFoundException"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let mut all_tags = tags(ctx, props)?;
        all_tags.extend(system_tags(ctx));
        let arn = self.acm.request_certificate(
            &ctx.region,
            CertificateRequest {
                domain_name: required(props, "DomainName")?,
                subject_alternative_names: strings(props, "SubjectAlternativeNames")?,
                validation_method: scalar(props, "ValidationMethod")?,
                idempotency_token: None,
                key_algorithm: scalar(props, "KeyAlgorithm")?,
                transparency_logging: scalar(props, "CertificateTransparencyLoggingPreference")?,
                tags: all_tags,
            },
        )?;
        // A certificate that is not issued stays recorded under its ARN: the rollback (or
        // the stack's deletion) deletes it, as CloudFormation does.
        after_create(&arn, self.validate(ctx, &arn, props).await)?;
        Ok(Made::new(&arn).with("Id", arn.clone()))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["Tags"])?;
        let want = tags(ctx, new)?;
        let live = self.acm.tags(&ctx.region, id)?;
        let stale: Vec<(String, Option<String>)> = live
            .keys()
            .filter(|k| !k.starts_with("aws:") && !want.iter().any(|(w, _)| w == *k))
            .map(|k| (k.clone(), None))
            .collect();
        if !stale.is_empty() {
            self.acm.remove_tags(&ctx.region, id, &stale)?;
        }
        if !want.is_empty() {
            self.acm.add_tags(&ctx.region, id, &want)?;
        }
        Ok(Made::new(id).with("Id", id.to_string()))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.acm.delete_certificate(&ctx.region, id)?)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<cumulo_engine::Observed>> {
        let c = self.acm.certificate(&ctx.region, id)?;
        let mut props = Map::new();
        props.insert("DomainName".into(), Value::from(c.domain_name));
        props.insert("ValidationMethod".into(), Value::from(c.validation_method));
        Ok(Some(cumulo_engine::Observed {
            properties: props,
            attributes: Map::from_iter([("Id".to_string(), Value::from(id))]),
        }))
    }
}
