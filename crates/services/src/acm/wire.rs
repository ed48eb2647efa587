//! The JSON 1.1 adapter: decodes `CertificateManager.<Operation>` bodies into the typed
//! operations and answers their results.

use super::AcmService;
use super::ops::CertificateRequest;
use crate::json_body::{self, Body, null_member};
use base64::Engine;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::{Value, json};

pub fn handle(svc: &AcmService, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("");
    let result = json_body::parse(req).and_then(|m| {
        dispatch(
            svc,
            &req.region,
            op,
            Body::new(&m, missing),
            &Value::Object(m.clone()),
        )
    });
    json_body::respond(req, result)
}

fn missing(name: &str) -> AwsError {
    AwsError::bad_request("ValidationException", null_member(&lower_first(name)))
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A blob member: base64 in the JSON body, as botocore sends it.
fn blob(b: &Body<'_>, name: &str) -> Result<Option<Vec<u8>>, AwsError> {
    match b.opt_str(name)? {
        None => Ok(None),
        Some(s) => base64::engine::general_purpose::STANDARD
            .decode(s.trim())
            .map(Some)
            .map_err(|_| {
                AwsError::bad_request(
                    "SerializationException",
                    format!("Invalid base64 in member {name}"),
                )
            }),
    }
}

fn dispatch(
    svc: &AcmService,
    region: &str,
    op: &str,
    b: Body<'_>,
    raw: &Value,
) -> Result<Value, AwsError> {
    let empty = json!({});
    Ok(match op {
        "RequestCertificate" => {
            let options = b.object("Options")?;
            let req = CertificateRequest {
                domain_name: b.str("DomainName")?,
                subject_alternative_names: b
                    .opt_strings("SubjectAlternativeNames")?
                    .unwrap_or_default(),
                validation_method: b.opt_str("ValidationMethod")?,
                idempotency_token: b.opt_str("IdempotencyToken")?,
                key_algorithm: b.opt_str("KeyAlgorithm")?,
                transparency_logging: match options {
                    Some(o) => o.opt_str("CertificateTransparencyLoggingPreference")?,
                    None => None,
                },
                tags: b.tag_list("Tags", "Key", "Value")?,
            };
            json!({"CertificateArn": svc.request_certificate(region, req)?})
        }
        "DescribeCertificate" => svc.describe_certificate(region, &b.str("CertificateArn")?)?,
        "GetCertificate" => svc.get_certificate(region, &b.str("CertificateArn")?)?,
        "ListCertificates" => svc.list_certificates(region, raw)?,
        "DeleteCertificate" => {
            svc.delete_certificate(region, &b.str("CertificateArn")?)?;
            empty
        }
        "ImportCertificate" => {
            let cert = blob(&b, "Certificate")?.ok_or_else(|| missing("Certificate"))?;
            let key = blob(&b, "PrivateKey")?.ok_or_else(|| missing("PrivateKey"))?;
            let chain = blob(&b, "CertificateChain")?;
            let arn = svc.import_certificate(
                region,
                &cert,
                &key,
                chain.as_deref(),
                b.opt_str("CertificateArn")?.as_deref(),
                b.tag_list("Tags", "Key", "Value")?,
            )?;
            json!({"CertificateArn": arn})
        }
        "AddTagsToCertificate" => {
            svc.add_tags(
                region,
                &b.str("CertificateArn")?,
                &b.tag_list("Tags", "Key", "Value")?,
            )?;
            empty
        }
        "RemoveTagsFromCertificate" => {
            let tags = b
                .objects("Tags")?
                .iter()
                .map(|t| Ok((t.str("Key")?, t.opt_str("Value")?)))
                .collect::<Result<Vec<_>, AwsError>>()?;
            svc.remove_tags(region, &b.str("CertificateArn")?, &tags)?;
            empty
        }
        "ListTagsForCertificate" => {
            let tags: Vec<Value> = svc
                .tags(region, &b.str("CertificateArn")?)?
                .into_iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect();
            json!({"Tags": tags})
        }
        "RenewCertificate" => {
            svc.renew_certificate(region, &b.str("CertificateArn")?)?;
            empty
        }
        "ResendValidationEmail" => {
            svc.resend_validation_email(
                region,
                &b.str("CertificateArn")?,
                &b.str("Domain")?,
                &b.str("ValidationDomain")?,
            )?;
            empty
        }
        other => return Err(AwsError::not_implemented("acm", other)),
    })
}
