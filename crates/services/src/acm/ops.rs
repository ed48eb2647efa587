//! Typed ACM operations. `add_in_use_by`/`remove_in_use_by` are what other services call when a
//! resource of theirs starts or stops using a certificate.

use super::AcmService;
use super::state;
use cumulo_wire::AwsError;

fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(e.to_string())
}

pub fn not_found(arn: &str) -> AwsError {
    AwsError::bad_request(
        "ResourceNotFoundException",
        format!("Could not find certificate {arn}."),
    )
}

impl AcmService {
    /// CertificateNotFound (ResourceNotFoundException) when absent; records `user_arn` in InUseBy.
    pub fn add_in_use_by(
        &self,
        region: &str,
        certificate_arn: &str,
        user_arn: &str,
    ) -> Result<(), AwsError> {
        self.change_in_use_by(region, certificate_arn, |set| {
            set.insert(user_arn.to_string())
        })
    }

    pub fn remove_in_use_by(
        &self,
        region: &str,
        certificate_arn: &str,
        user_arn: &str,
    ) -> Result<(), AwsError> {
        self.change_in_use_by(region, certificate_arn, |set| set.remove(user_arn))
    }

    /// Applies `change` to the certificate's InUseBy set, writing through only when it changed.
    fn change_in_use_by(
        &self,
        region: &str,
        certificate_arn: &str,
        change: impl FnOnce(&mut std::collections::BTreeSet<String>) -> bool,
    ) -> Result<(), AwsError> {
        let mut regions = self.lock();
        let cert = regions
            .get(region)
            .and_then(|certs| certs.get(certificate_arn))
            .ok_or_else(|| not_found(certificate_arn))?;
        let mut updated = cert.clone();
        if !change(&mut updated.in_use_by) {
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

    /// A copy of one certificate.
    pub fn certificate(&self, region: &str, arn: &str) -> Result<state::Certificate, AwsError> {
        self.lock()
            .get(region)
            .and_then(|certs| certs.get(arn))
            .cloned()
            .ok_or_else(|| not_found(arn))
    }
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
            created_at: 0.0,
            in_use_by: Default::default(),
            tags: Default::default(),
        };
        svc.store
            .write(|tx| state::save(tx, "us-east-1", &cert))
            .expect("saved");
        svc.lock()
            .entry("us-east-1".into())
            .or_default()
            .insert(arn.clone(), cert);
        svc.add_in_use_by("us-east-1", &arn, "arn:lb")
            .expect("added");
        svc.add_in_use_by("us-east-1", &arn, "arn:lb")
            .expect("idempotent");
        let got = svc.certificate("us-east-1", &arn).expect("cert");
        assert_eq!(got.in_use_by.len(), 1);
        svc.remove_in_use_by("us-east-1", &arn, "arn:lb")
            .expect("removed");
        assert!(
            svc.certificate("us-east-1", &arn)
                .expect("cert")
                .in_use_by
                .is_empty()
        );
        assert!(svc.certificate("eu-west-1", &arn).is_err());
    }
}
