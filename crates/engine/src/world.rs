//! What the engine needs from the emulated services besides providers: template URLs read from
//! the emulator's own S3, SSM values for `AWS::SSM::Parameter::Value<...>` parameters,
//! dynamic-reference resolution, and what transforms need (AWS::Include snippets from S3, macro
//! functions run by Lambda). The CloudFormation service implements it over the services'
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

    /// The text of the S3 object an AWS::Include `Location` names (`s3://bucket/key`). The
    /// error says why it could not be read. A world without S3 cannot, and says so.
    async fn fetch_include(&self, _region: &str, location: &str) -> Result<String, String> {
        Err(format!("cumulo: cannot read {location} here (no S3)"))
    }

    /// Invokes a Lambda function synchronously (a macro's) with a JSON `payload`; its answer's
    /// payload, or why there is none (the invocation failed, or the function raised: its
    /// `errorMessage`). A world without Lambda cannot, and says so.
    async fn invoke_function(
        &self,
        _region: &str,
        _host: &str,
        function: &str,
        _payload: String,
    ) -> Result<String, String> {
        Err(format!("cumulo: cannot invoke {function} here (no Lambda)"))
    }

    /// The value a dynamic reference stands for. The error names the reference.
    async fn resolve_dynamic(
        &self,
        region: &str,
        reference: &DynamicReference,
    ) -> Result<String, String>;
}
