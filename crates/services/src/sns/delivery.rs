//! What subscribers receive: AWS's JSON envelope (Notification, SubscriptionConfirmation) with
//! its exact key order and layout, and the signature fields.
//!
//! Signatures: AWS signs with an RSA key whose certificate is at SigningCertURL. cumulo has no
//! such certificate; it signs the same canonical string with HMAC-SHA256 under a key made at
//! start-up, so Signature is a well-formed base64 value but does not verify against a
//! certificate (the SigningCertURL names cumulo and serves nothing).

use super::publish::MessageAttribute;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{Hmac, Mac};
use rand::Rng;
use sha2::Sha256;

pub struct Signer {
    key: [u8; 32],
}

impl Signer {
    pub fn new() -> Self {
        Signer {
            key: rand::rng().random(),
        }
    }

    /// Signs AWS's canonical string: `Key\nValue\n` for the signed keys in alphabetical order.
    pub fn sign(&self, fields: &[(&str, &str)]) -> String {
        let mut signed: Vec<&(&str, &str)> = fields.iter().collect();
        signed.sort_by_key(|(k, _)| *k);
        let mut text = String::new();
        for (k, v) in signed {
            text.push_str(k);
            text.push('\n');
            text.push_str(v);
            text.push('\n');
        }
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.key) else {
            return String::new();
        };
        mac.update(text.as_bytes());
        B64.encode(mac.finalize().into_bytes())
    }
}

/// The fields of one envelope, in AWS's order.
pub struct Envelope<'a> {
    pub kind: &'a str,
    pub message_id: &'a str,
    pub sequence_number: Option<&'a str>,
    pub token: Option<&'a str>,
    pub topic_arn: &'a str,
    pub subject: Option<&'a str>,
    pub message: &'a str,
    pub subscribe_url: Option<&'a str>,
    pub timestamp: &'a str,
    pub signature_version: &'a str,
    pub cert_url: &'a str,
    pub unsubscribe_url: Option<&'a str>,
    pub attributes: &'a [(String, MessageAttribute)],
}

fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

impl Envelope<'_> {
    /// The JSON text exactly as AWS lays it out (`"Key" : value`, two-space indent).
    pub fn render(&self, signer: &Signer) -> String {
        let mut signed: Vec<(&str, &str)> = vec![
            ("Message", self.message),
            ("MessageId", self.message_id),
            ("Timestamp", self.timestamp),
            ("TopicArn", self.topic_arn),
            ("Type", self.kind),
        ];
        if let Some(s) = self.subject {
            signed.push(("Subject", s));
        }
        if let Some(t) = self.token {
            signed.push(("Token", t));
        }
        if let Some(u) = self.subscribe_url {
            signed.push(("SubscribeURL", u));
        }
        let signature = signer.sign(&signed);
        let mut fields: Vec<(&str, String)> = vec![
            ("Type", quote(self.kind)),
            ("MessageId", quote(self.message_id)),
        ];
        if let Some(n) = self.sequence_number {
            fields.push(("SequenceNumber", quote(n)));
        }
        if let Some(t) = self.token {
            fields.push(("Token", quote(t)));
        }
        fields.push(("TopicArn", quote(self.topic_arn)));
        if let Some(s) = self.subject {
            fields.push(("Subject", quote(s)));
        }
        fields.push(("Message", quote(self.message)));
        if let Some(u) = self.subscribe_url {
            fields.push(("SubscribeURL", quote(u)));
        }
        fields.push(("Timestamp", quote(self.timestamp)));
        fields.push(("SignatureVersion", quote(self.signature_version)));
        fields.push(("Signature", quote(&signature)));
        fields.push(("SigningCertURL", quote(self.cert_url)));
        if let Some(u) = self.unsubscribe_url {
            fields.push(("UnsubscribeURL", quote(u)));
        }
        if !self.attributes.is_empty() {
            let inner: Vec<String> = self
                .attributes
                .iter()
                .map(|(name, a)| {
                    let value = match &a.binary_value {
                        Some(b) => B64.encode(b),
                        None => a.string_value.clone().unwrap_or_default(),
                    };
                    let body = serde_json::json!({"Type": a.data_type, "Value": value});
                    format!("    {} : {}", quote(name), body)
                })
                .collect();
            fields.push((
                "MessageAttributes",
                format!("{{\n{}\n  }}", inner.join(",\n")),
            ));
        }
        let lines: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("  {} : {v}", quote(k)))
            .collect();
        format!("{{\n{}\n}}", lines.join(",\n"))
    }
}

/// AWS's timestamp form in envelopes: `2024-01-01T00:00:00.000Z`.
pub fn timestamp() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_is_valid_json_in_aws_order() {
        let attrs = vec![(
            "color".to_string(),
            MessageAttribute {
                data_type: "String".into(),
                string_value: Some("red \"x\"".into()),
                binary_value: None,
            },
        )];
        let signer = Signer::new();
        let text = Envelope {
            kind: "Notification",
            message_id: "m-1",
            sequence_number: None,
            token: None,
            topic_arn: "arn:aws:sns:us-east-1:000000000000:t",
            subject: Some("hi"),
            message: "line1\nline2",
            subscribe_url: None,
            timestamp: "2024-01-01T00:00:00.000Z",
            signature_version: "1",
            cert_url: "http://localhost/cert.pem",
            unsubscribe_url: Some("http://localhost/?Action=Unsubscribe"),
            attributes: &attrs,
        }
        .render(&signer);
        assert!(text.starts_with("{\n  \"Type\" : \"Notification\",\n  \"MessageId\" : \"m-1\","));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["Message"], "line1\nline2");
        assert_eq!(v["MessageAttributes"]["color"]["Value"], "red \"x\"");
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "Type",
                "MessageId",
                "TopicArn",
                "Subject",
                "Message",
                "Timestamp",
                "SignatureVersion",
                "Signature",
                "SigningCertURL",
                "UnsubscribeURL",
                "MessageAttributes"
            ]
        );
        assert!(!v["Signature"].as_str().unwrap().is_empty());
    }
}
