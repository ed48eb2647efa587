//! What the engine needs from the emulated services besides providers: template URLs read from
//! the emulator's own S3, SSM values for `AWS::SSM::Parameter::Value<...>` parameters, and
//! dynamic-reference resolution. The CloudFormation service implements it over the services'
//! typed operations; direct deploy does the same in-process.

use cumulo_template::DynamicReference;

#[async_trait::async_trait]
pub trait World: Send + Sync {
    /// The body of a TemplateURL, in any form a client uses (`http://127.0.0.1:P/bucket/key`,
    /// `https://bucket.s3.amazonaws.com/key`, `https://s3.<region>.amazonaws.com/bucket/key`).
    /// The error is the message AWS would give.
    async fn fetch_template(&self, region: &str, url: &str) -> Result<String, String>;

    /// Current value of an SSM parameter (for SSM parameter types), `None` when absent.
    fn ssm_parameter(&self, region: &str, name: &str) -> Option<String>;

    /// Publishes one stack event to an SNS topic of the stack's NotificationARNs (`host` is the
    /// caller's, for the links SNS puts in its envelope). The error says why it was not
    /// delivered. A world without SNS cannot deliver, and says so.
    fn notify(
        &self,
        _region: &str,
        _host: &str,
        topic_arn: &str,
        _subject: &str,
        _message: &str,
    ) -> Result<(), String> {
        Err(format!(
            "cumulo: cannot publish stack notifications to {topic_arn} here (no SNS)"
        ))
    }

    /// The value a dynamic reference stands for. The error names the reference.
    async fn resolve_dynamic(
        &self,
        region: &str,
        reference: &DynamicReference,
    ) -> Result<String, String>;
}
