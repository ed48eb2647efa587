//! The engine's [`World`] over the emulated services: template URLs and AWS::Include snippets
//! are read from this emulator's own S3 (never the network), SSM values through Parameter
//! Store's typed operations, secrets through Secrets Manager's, and macro functions are invoked
//! through Lambda's.

use crate::s3::{Conditions, S3Service};
use crate::secretsmanager::{SecretValueInput, SecretsManagerService};
use crate::ssm::{ParameterType, SsmService};
use cumulo_engine::World;
use cumulo_template::DynamicReference;
use std::sync::Arc;

/// AWS's cap on a template read from a TemplateURL.
const MAX_TEMPLATE_URL_BYTES: u64 = 1_000_000;

pub struct ServiceWorld {
    pub s3: Arc<S3Service>,
    pub ssm: Arc<SsmService>,
    pub secretsmanager: Arc<SecretsManagerService>,
    pub sns: Arc<crate::sns::SnsService>,
    pub lambda: Arc<crate::lambda::LambdaService>,
}

/// AWS's answer for a TemplateURL that is not an S3 object URL.
fn unsupported_url() -> String {
    "TemplateURL must be a supported URL.".to_string()
}

/// `(bucket, key)` of an S3 object URL in any form a client writes: path style against the
/// emulator (`http://127.0.0.1:4566/bucket/key`, `http://localhost:4566/bucket/key`) or AWS
/// (`https://s3.amazonaws.com/bucket/key`, `https://s3.<region>.amazonaws.com/bucket/key`), and
/// virtual-hosted style (`http://bucket.localhost:4566/key`, `https://bucket.s3.amazonaws.com/key`,
/// `https://bucket.s3.<region>.amazonaws.com/key`). The key is percent-decoded; a query string
/// (a presigned URL's) is ignored.
pub fn parse_s3_url(url: &str) -> Option<(String, String)> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (host, path) = rest.split_once('/')?;
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    if let Some(bucket) = crate::gateway::virtual_host_bucket(host) {
        return (!path.is_empty()).then(|| (bucket.to_string(), decode(path)));
    }
    let (bucket, key) = path.split_once('/')?;
    (!bucket.is_empty() && !key.is_empty()).then(|| (bucket.to_string(), decode(key)))
}

/// The literal text of a reference, for error messages.
fn reference_text(r: &DynamicReference) -> String {
    match r {
        DynamicReference::Ssm { name, version } => match version {
            Some(v) => format!("{{{{resolve:ssm:{name}:{v}}}}}"),
            None => format!("{{{{resolve:ssm:{name}}}}}"),
        },
        DynamicReference::SsmSecure { name, version } => match version {
            Some(v) => format!("{{{{resolve:ssm-secure:{name}:{v}}}}}"),
            None => format!("{{{{resolve:ssm-secure:{name}}}}}"),
        },
        DynamicReference::SecretsManager {
            secret_id,
            json_key,
            version_stage,
            version_id,
        } => {
            let mut text = format!("{{{{resolve:secretsmanager:{secret_id}");
            let fields = [json_key, version_stage, version_id];
            if let Some(last) = fields.iter().rposition(|f| f.is_some()) {
                text.push_str(":SecretString");
                for f in &fields[..=last] {
                    text.push(':');
                    text.push_str(f.as_deref().unwrap_or_default());
                }
            }
            text.push_str("}}");
            text
        }
    }
}

impl ServiceWorld {
    /// An object's text, with S3's error as CloudFormation quotes it.
    fn read_object(&self, bucket: &str, key: &str) -> Result<String, String> {
        let s3_error = |e: cumulo_wire::AwsError| {
            format!(
                "S3 error: {} For more information check http://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html",
                e.message
            )
        };
        let meta = self.s3.head_object(bucket, key, None).map_err(s3_error)?;
        if meta.size > MAX_TEMPLATE_URL_BYTES {
            return Err(format!(
                "Template may not exceed {MAX_TEMPLATE_URL_BYTES} bytes in size."
            ));
        }
        let got = self
            .s3
            .get_object(bucket, key, None, None, &Conditions::default())
            .map_err(s3_error)?
            .map_err(|_| unsupported_url())?;
        String::from_utf8(got.body).map_err(|_| "Template format error: not UTF-8".to_string())
    }

    /// A `{{resolve:secretsmanager:...}}` value: the whole SecretString, or one top-level key of
    /// it as JSON, of the version named by id or stage (AWSCURRENT by default). Errors carry the
    /// service's own message, as CloudFormation's do.
    fn resolve_secret(
        &self,
        region: &str,
        secret_id: &str,
        json_key: Option<&str>,
        version_stage: Option<&str>,
        version_id: Option<&str>,
    ) -> Result<String, String> {
        let v = self
            .secretsmanager
            .get_secret_value(region, secret_id, version_id, version_stage)
            .map_err(|e| {
                format!(
                    "{} (Service: AWSSecretsManager; Status Code: {}; Error Code: {}; Request ID: {})",
                    e.message,
                    e.status.as_u16(),
                    e.code,
                    uuid::Uuid::new_v4()
                )
            })?;
        let SecretValueInput::String(text) = v.value else {
            return Err(format!(
                "Secret {secret_id} has a SecretBinary value; dynamic references resolve SecretString only"
            ));
        };
        let Some(key) = json_key else {
            return Ok(text);
        };
        let parsed: serde_json::Value = serde_json::from_str(&text)
            .map_err(|_| "Could not parse SecretString JSON".to_string())?;
        match parsed.get(key) {
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            Some(other) => Ok(other.to_string()),
            None => Err(format!("Could not find SecretString key: {key}")),
        }
    }
}

#[async_trait::async_trait]
impl World for ServiceWorld {
    fn notify(
        &self,
        region: &str,
        host: &str,
        topic_arn: &str,
        subject: &str,
        message: &str,
    ) -> Result<(), String> {
        let input = crate::sns::PublishInput {
            topic_arn: Some(topic_arn.to_string()),
            message: message.to_string(),
            subject: Some(subject.to_string()),
            ..Default::default()
        };
        self.sns
            .publish(region, &format!("http://{host}"), input)
            .map(|_| ())
            .map_err(|e| e.message)
    }

    async fn fetch_template(&self, _region: &str, url: &str) -> Result<String, String> {
        let (bucket, key) = parse_s3_url(url).ok_or_else(unsupported_url)?;
        self.read_object(&bucket, &key)
    }

    async fn fetch_include(&self, _region: &str, location: &str) -> Result<String, String> {
        let (bucket, key) = location
            .strip_prefix("s3://")
            .and_then(|rest| rest.split_once('/'))
            .filter(|(b, k)| !b.is_empty() && !k.is_empty())
            .ok_or_else(|| format!("{location} is not an S3 URI of the form s3://bucket/key"))?;
        self.read_object(bucket, key)
    }

    async fn invoke_function(
        &self,
        region: &str,
        host: &str,
        function: &str,
        payload: String,
    ) -> Result<String, String> {
        let invoked = self
            .lambda
            .core()
            .invoke(
                region,
                function,
                None,
                payload.into(),
                crate::lambda::InvocationType::RequestResponse,
                host,
            )
            .await
            .map_err(|e| e.message)?;
        let out = invoked
            .output
            .ok_or_else(|| format!("{function} returned no response"))?;
        let text = String::from_utf8_lossy(&out.payload).into_owned();
        if out.function_error.is_some() {
            let message = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v.get("errorMessage")?.as_str().map(str::to_string));
            return Err(message.unwrap_or(text));
        }
        Ok(text)
    }

    fn ssm_parameter(&self, region: &str, name: &str) -> Option<String> {
        self.ssm
            .get_parameter(region, name, true)
            .ok()
            .map(|p| p.value)
    }

    async fn resolve_dynamic(
        &self,
        region: &str,
        reference: &DynamicReference,
    ) -> Result<String, String> {
        let text = reference_text(reference);
        let (name, version, secure) = match reference {
            DynamicReference::Ssm { name, version } => (name, version, false),
            DynamicReference::SsmSecure { name, version } => (name, version, true),
            DynamicReference::SecretsManager {
                secret_id,
                json_key,
                version_stage,
                version_id,
            } => {
                return self.resolve_secret(
                    region,
                    secret_id,
                    json_key.as_deref(),
                    version_stage.as_deref(),
                    version_id.as_deref(),
                );
            }
        };
        let requested = match version {
            Some(v) => format!("{name}:{v}"),
            None => name.clone(),
        };
        let p = self
            .ssm
            .get_parameter(region, &requested, secure)
            .map_err(|e| format!("{text}: {}", e.message))?;
        if !secure && p.param_type == ParameterType::SecureString {
            return Err(format!(
                "{text}: parameter {name} is a SecureString; reference it with ssm-secure"
            ));
        }
        Ok(p.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_s3_url_form() {
        let want = Some(("bkt".to_string(), "dir/t.yaml".to_string()));
        for url in [
            "http://127.0.0.1:4566/bkt/dir/t.yaml",
            "http://localhost:4566/bkt/dir/t.yaml",
            "http://bkt.localhost:4566/dir/t.yaml",
            "https://bkt.s3.amazonaws.com/dir/t.yaml",
            "https://bkt.s3.eu-west-1.amazonaws.com/dir/t.yaml",
            "https://s3.eu-west-1.amazonaws.com/bkt/dir/t.yaml",
            "https://s3.amazonaws.com/bkt/dir/t.yaml",
            "https://s3.amazonaws.com/bkt/dir/t.yaml?X-Amz-Signature=abc",
        ] {
            assert_eq!(parse_s3_url(url), want, "{url}");
        }
        assert_eq!(
            parse_s3_url("http://localhost:4566/bkt/a%20b.json"),
            Some(("bkt".into(), "a b.json".into()))
        );
        for bad in ["ftp://x/y/z", "https://s3.amazonaws.com/bkt", "not a url"] {
            assert_eq!(parse_s3_url(bad), None, "{bad}");
        }
    }

    #[tokio::test]
    async fn templates_and_parameters_come_from_the_services() {
        let s = crate::providers::test_support::services();
        let world = ServiceWorld {
            s3: s.s3.clone(),
            ssm: s.ssm.clone(),
            secretsmanager: s.secretsmanager.clone(),
            sns: s.sns.clone(),
            lambda: s.lambda.clone(),
        };
        s.s3.create_bucket("us-east-1", "tpl", None)
            .await
            .expect("bucket");
        s.s3.put_object(
            "tpl",
            crate::s3::PutInput {
                key: "t.json".into(),
                body: b"{\"Resources\":{}}".to_vec().into(),
                ..Default::default()
            },
        )
        .expect("put");
        let body = world
            .fetch_template("us-east-1", "https://tpl.s3.amazonaws.com/t.json")
            .await
            .expect("fetch");
        assert_eq!(body, "{\"Resources\":{}}");
        let e = world
            .fetch_template("us-east-1", "http://localhost:4566/tpl/missing.json")
            .await
            .expect_err("missing");
        assert!(e.starts_with("S3 error: "), "{e}");

        s.ssm
            .put_parameter(
                "us-east-1",
                crate::ssm::PutParameterInput {
                    name: "/app/secret".into(),
                    value: "hunter2".into(),
                    param_type: Some("SecureString".into()),
                    ..Default::default()
                },
            )
            .await
            .expect("put");
        let secure = DynamicReference::SsmSecure {
            name: "/app/secret".into(),
            version: None,
        };
        assert_eq!(
            world.resolve_dynamic("us-east-1", &secure).await.as_deref(),
            Ok("hunter2")
        );
        let plain = DynamicReference::Ssm {
            name: "/app/secret".into(),
            version: Some(1),
        };
        assert!(world.resolve_dynamic("us-east-1", &plain).await.is_err());
        let missing = DynamicReference::Ssm {
            name: "/nope".into(),
            version: None,
        };
        let e = world
            .resolve_dynamic("us-east-1", &missing)
            .await
            .expect_err("missing");
        assert!(e.starts_with("{{resolve:ssm:/nope}}"), "{e}");
        let sm = |id: &str, key: Option<&str>, stage: Option<&str>, vid: Option<&str>| {
            DynamicReference::SecretsManager {
                secret_id: id.into(),
                json_key: key.map(Into::into),
                version_stage: stage.map(Into::into),
                version_id: vid.map(Into::into),
            }
        };
        let e = world
            .resolve_dynamic("us-east-1", &sm("s", None, None, None))
            .await
            .expect_err("sm");
        assert!(
            e.starts_with("Secrets Manager can't find the specified secret."),
            "{e}"
        );
        let (arn, _, first) = s
            .secretsmanager
            .create_secret(
                "us-east-1",
                crate::secretsmanager::CreateSecretInput {
                    name: "db".into(),
                    value: Some(SecretValueInput::String(
                        r#"{"user":"admin","port":5432}"#.into(),
                    )),
                    ..Default::default()
                },
            )
            .expect("create");
        s.secretsmanager
            .put_secret_value(
                "us-east-1",
                "db",
                None,
                Some(SecretValueInput::String(r#"{"user":"root"}"#.into())),
                None,
            )
            .expect("put");
        let resolve = |r| {
            let world = &world;
            async move { world.resolve_dynamic("us-east-1", &r).await }
        };
        assert_eq!(
            resolve(sm("db", Some("user"), None, None)).await.as_deref(),
            Ok("root")
        );
        assert_eq!(
            resolve(sm(&arn, Some("user"), Some("AWSPREVIOUS"), None))
                .await
                .as_deref(),
            Ok("admin")
        );
        assert_eq!(
            resolve(sm("db", Some("port"), None, first.as_deref()))
                .await
                .as_deref(),
            Ok("5432")
        );
        assert_eq!(
            resolve(sm("db", None, None, None)).await.as_deref(),
            Ok(r#"{"user":"root"}"#)
        );
        assert_eq!(
            resolve(sm("db", Some("nope"), None, None)).await,
            Err("Could not find SecretString key: nope".to_string())
        );
        assert_eq!(
            world.ssm_parameter("us-east-1", "/app/secret").as_deref(),
            Some("hunter2")
        );
    }
}
