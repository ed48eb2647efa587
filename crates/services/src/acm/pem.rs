//! What ImportCertificate reads from a PEM certificate: names, validity, issuer, serial, key
//! and signature algorithms and key usages, as DescribeCertificate reports them.

use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate};
use x509_parser::public_key::PublicKey;

/// A parsed certificate, in DescribeCertificate's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub domain_name: String,
    pub subject_alternative_names: Vec<String>,
    pub subject: String,
    pub issuer: String,
    pub serial: String,
    pub not_before: f64,
    pub not_after: f64,
    pub key_algorithm: String,
    pub signature_algorithm: String,
    pub key_usages: Vec<String>,
    pub extended_key_usages: Vec<(String, String)>,
}

/// Why a PEM text is not one certificate.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PemError {
    #[error(
        "The certificate field contains more than one certificate. You can specify only one certificate in this field."
    )]
    MoreThanOne,
    #[error("Could not validate the certificate with the certificate chain.")]
    Unreadable,
}

/// The DER blocks of a PEM text labelled `label`.
pub fn blocks(text: &[u8], label: &str) -> Result<Vec<Vec<u8>>, PemError> {
    let mut out = Vec::new();
    for pem in x509_parser::pem::Pem::iter_from_buffer(text) {
        let pem = pem.map_err(|_| PemError::Unreadable)?;
        if pem.label == label {
            out.push(pem.contents);
        }
    }
    Ok(out)
}

/// Whether a text holds a PEM private key block of any kind.
pub fn has_private_key(text: &[u8]) -> bool {
    x509_parser::pem::Pem::iter_from_buffer(text)
        .filter_map(Result::ok)
        .any(|p| p.label.ends_with("PRIVATE KEY"))
}

/// `C=AU,ST=...,CN=x`, as ACM writes subjects.
fn name(n: &x509_parser::x509::X509Name<'_>) -> String {
    n.to_string().replace(", ", ",")
}

fn signature(oid: &str) -> String {
    match oid {
        "1.2.840.113549.1.1.5" => "SHA1WITHRSA",
        "1.2.840.113549.1.1.11" => "SHA256WITHRSA",
        "1.2.840.113549.1.1.12" => "SHA384WITHRSA",
        "1.2.840.113549.1.1.13" => "SHA512WITHRSA",
        "1.2.840.10045.4.3.2" => "SHA256WITHECDSA",
        "1.2.840.10045.4.3.3" => "SHA384WITHECDSA",
        "1.2.840.10045.4.3.4" => "SHA512WITHECDSA",
        _ => "UNKNOWN",
    }
    .to_string()
}

/// One PEM certificate read.
pub fn parse(text: &[u8]) -> Result<Parsed, PemError> {
    let ders = blocks(text, "CERTIFICATE")?;
    let der = match ders.as_slice() {
        [one] => one,
        [] => return Err(PemError::Unreadable),
        _ => return Err(PemError::MoreThanOne),
    };
    let (_, cert) = X509Certificate::from_der(der).map_err(|_| PemError::Unreadable)?;
    let cn = cert
        .subject()
        .iter_common_name()
        .next()
        .and_then(|a| a.as_str().ok())
        .map(str::to_string);
    let mut sans: Vec<String> = Vec::new();
    if let Ok(Some(ext)) = cert.subject_alternative_name() {
        for g in &ext.value.general_names {
            match g {
                GeneralName::DNSName(d) => sans.push(d.to_string()),
                GeneralName::IPAddress(ip) if ip.len() == 4 => {
                    sans.push(format!("IP:{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3]))
                }
                _ => {}
            }
        }
    }
    let domain_name = cn
        .clone()
        .or_else(|| sans.first().cloned())
        .unwrap_or_default();
    if !sans.contains(&domain_name) && !domain_name.is_empty() {
        sans.insert(0, domain_name.clone());
    }
    let issuer = cert
        .issuer()
        .iter_organization()
        .next()
        .or_else(|| cert.issuer().iter_common_name().next())
        .and_then(|a| a.as_str().ok())
        .unwrap_or("")
        .to_string();
    let key_algorithm = match cert.public_key().parsed() {
        Ok(PublicKey::RSA(k)) => format!("RSA-{}", k.key_size()),
        Ok(PublicKey::EC(p)) => match p.key_size() {
            256 => "EC-prime256v1".to_string(),
            384 => "EC-secp384r1".to_string(),
            _ => "EC-secp521r1".to_string(),
        },
        _ => "UNKNOWN".to_string(),
    };
    let mut key_usages = Vec::new();
    if let Ok(Some(ku)) = cert.key_usage() {
        let k = ku.value;
        for (on, n) in [
            (k.digital_signature(), "DIGITAL_SIGNATURE"),
            (k.non_repudiation(), "NON_REPUDIATION"),
            (k.key_encipherment(), "KEY_ENCIPHERMENT"),
            (k.data_encipherment(), "DATA_ENCIPHERMENT"),
            (k.key_agreement(), "KEY_AGREEMENT"),
            (k.key_cert_sign(), "CERTIFICATE_SIGNING"),
            (k.crl_sign(), "CRL_SIGNING"),
            (k.encipher_only(), "ENCIPHER_ONLY"),
            (k.decipher_only(), "DECIPHER_ONLY"),
        ] {
            if on {
                key_usages.push(n.to_string());
            }
        }
    }
    let mut extended_key_usages = Vec::new();
    if let Ok(Some(eku)) = cert.extended_key_usage() {
        let e = eku.value;
        for (on, n, oid) in [
            (
                e.server_auth,
                "TLS_WEB_SERVER_AUTHENTICATION",
                "1.3.6.1.5.5.7.3.1",
            ),
            (
                e.client_auth,
                "TLS_WEB_CLIENT_AUTHENTICATION",
                "1.3.6.1.5.5.7.3.2",
            ),
            (e.code_signing, "CODE_SIGNING", "1.3.6.1.5.5.7.3.3"),
            (e.email_protection, "EMAIL_PROTECTION", "1.3.6.1.5.5.7.3.4"),
            (e.time_stamping, "TIME_STAMPING", "1.3.6.1.5.5.7.3.8"),
            (e.ocsp_signing, "OCSP_SIGNING", "1.3.6.1.5.5.7.3.9"),
        ] {
            if on {
                extended_key_usages.push((n.to_string(), oid.to_string()));
            }
        }
    }
    let validity = cert.validity();
    Ok(Parsed {
        domain_name,
        subject_alternative_names: sans,
        subject: name(cert.subject()),
        issuer,
        serial: cert.raw_serial_as_string(),
        not_before: validity.not_before.timestamp() as f64,
        not_after: validity.not_after.timestamp() as f64,
        key_algorithm,
        signature_algorithm: signature(&cert.signature_algorithm.algorithm.to_id_string()),
        key_usages,
        extended_key_usages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT: &[u8] = include_bytes!("../../../../tests/e2e/data/acm-test-cert.pem");
    const KEY: &[u8] = include_bytes!("../../../../tests/e2e/data/acm-test-key.pem");

    #[test]
    fn a_pem_certificate_reads_as_acm_reports_it() {
        let p = parse(CERT).expect("parsed");
        assert_eq!(p.domain_name, "localhost");
        assert_eq!(
            p.subject_alternative_names,
            ["localhost", "test.localhost.example", "IP:127.0.0.1"]
        );
        assert_eq!(p.subject, "C=AU,ST=Some-State,O=Cumulo Test,CN=localhost");
        assert_eq!(
            (p.issuer.as_str(), p.serial.as_str()),
            ("Cumulo Test", "03:e9")
        );
        assert_eq!(p.key_algorithm, "RSA-2048");
        assert_eq!(p.signature_algorithm, "SHA256WITHRSA");
        assert_eq!(p.key_usages, ["DIGITAL_SIGNATURE", "KEY_ENCIPHERMENT"]);
        assert!(p.not_after > p.not_before);
        assert!(has_private_key(KEY) && !has_private_key(CERT));
        let two = [CERT, CERT].concat();
        assert_eq!(parse(&two), Err(PemError::MoreThanOne));
        assert_eq!(parse(b"junk"), Err(PemError::Unreadable));
    }
}
