//! Lambda's records: what is persisted (as JSON documents) and what the typed operations take
//! and return. Field names follow the API's shapes so the wire adapter is a thin mapping.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One version's configuration: `$LATEST` (mutable) or a published, immutable snapshot.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VersionConfig {
    pub runtime: String,
    pub handler: String,
    pub role: String,
    pub description: String,
    pub timeout: i64,
    pub memory_size: i64,
    pub environment: BTreeMap<String, String>,
    /// Layer version ARNs, in the order the function declared them (AWS's /opt merge order).
    pub layers: Vec<String>,
    pub architectures: Vec<String>,
    pub ephemeral_storage: i64,
    /// SHA-256 of the deployment package, base64 (`CodeSha256`), also its key in the code table.
    pub code_sha256: String,
    pub code_size: i64,
    pub last_modified: String,
    pub revision_id: String,
    /// Advanced logging controls; documents written before they existed read as AWS's default.
    #[serde(default)]
    pub logging: LoggingConfig,
    /// `TracingConfig.Mode`: `PassThrough` or `Active`. Stored and reported as Lambda does; no
    /// X-Ray segments are sent (X-Ray is not emulated).
    #[serde(default = "pass_through")]
    pub tracing_mode: String,
    /// `KMSKeyArn`, the customer key AWS encrypts the environment with: stored and reported;
    /// cumulo keeps the environment as it keeps the rest of the configuration.
    #[serde(default)]
    pub kms_key_arn: Option<String>,
}

/// Lambda's default tracing mode (also what documents written before it existed read as).
pub fn pass_through() -> String {
    "PassThrough".into()
}

/// A function's `LoggingConfig`: the format its runtime writes logs in, the levels filtered by
/// (JSON format only, as on AWS) and the log group its logs go to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoggingConfig {
    /// `Text` or `JSON`.
    pub log_format: String,
    pub application_log_level: Option<String>,
    pub system_log_level: Option<String>,
    /// A custom log group; `None` is AWS's default `/aws/lambda/<function name>`.
    pub log_group: Option<String>,
}

impl Default for LoggingConfig {
    fn default() -> Self {
        LoggingConfig {
            log_format: "Text".into(),
            application_log_level: None,
            system_log_level: None,
            log_group: None,
        }
    }
}

impl LoggingConfig {
    /// The log group the function's logs go to.
    pub fn group(&self, function_name: &str) -> String {
        self.log_group
            .clone()
            .unwrap_or_else(|| format!("/aws/lambda/{function_name}"))
    }

    pub fn is_json(&self) -> bool {
        self.log_format == "JSON"
    }
}

/// A `LoggingConfig` as a request gives it: absent fields keep their current values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoggingInput {
    pub log_format: Option<String>,
    pub application_log_level: Option<String>,
    pub system_log_level: Option<String>,
    pub log_group: Option<String>,
}

/// A function and everything hanging off it; persisted as one document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    pub latest: VersionConfig,
    /// `Pending` until the package is unpacked, then `Active`.
    pub state: String,
    /// `InProgress` while an update is applied, then `Successful`.
    pub last_update_status: String,
    /// Published versions by number.
    pub versions: BTreeMap<u64, VersionConfig>,
    pub next_version: u64,
    pub aliases: BTreeMap<String, Alias>,
    /// Resource-based policy statements (AddPermission), in order.
    pub policy: Vec<Value>,
    pub policy_revision: String,
    /// Function URL configuration by qualifier (`$LATEST` for the unqualified one, or an alias).
    pub urls: BTreeMap<String, UrlConfig>,
    pub tags: BTreeMap<String, String>,
    pub reserved_concurrency: Option<i64>,
    /// Asynchronous invocation settings by qualifier (`$LATEST`, a version, an alias);
    /// documents written before they existed have none.
    #[serde(default)]
    pub event_invoke_configs: BTreeMap<String, EventInvokeConfig>,
}

/// A qualifier's PutFunctionEventInvokeConfig settings: stored and reported.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EventInvokeConfig {
    pub maximum_retry_attempts: Option<i64>,
    pub maximum_event_age: Option<i64>,
    pub on_success: Option<String>,
    pub on_failure: Option<String>,
    /// Epoch seconds (the API's `LastModified` timestamp).
    pub last_modified: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Alias {
    pub name: String,
    pub function_version: String,
    pub description: String,
    /// Weighted routing: extra version → weight.
    pub routing: BTreeMap<String, f64>,
    pub revision_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UrlConfig {
    pub url_id: String,
    pub auth_type: String,
    pub cors: Option<Value>,
    pub invoke_mode: String,
    pub creation_time: String,
    pub last_modified_time: String,
}

/// A published layer version.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LayerVersion {
    pub version: u64,
    pub description: String,
    pub compatible_runtimes: Vec<String>,
    pub compatible_architectures: Vec<String>,
    pub license_info: Option<String>,
    pub code_sha256: String,
    pub code_size: i64,
    pub created_date: String,
}

/// A layer: its versions (deleted ones are removed) and the next number to hand out.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Layer {
    pub name: String,
    pub versions: BTreeMap<u64, LayerVersion>,
    pub next_version: u64,
}

/// An SQS event source mapping.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EventSourceMapping {
    pub uuid: String,
    pub region: String,
    pub event_source_arn: String,
    /// The function as given (name or ARN, possibly qualified); resolved at each invoke.
    pub function_name: String,
    pub batch_size: i64,
    pub maximum_batching_window: i64,
    pub enabled: bool,
    pub report_batch_item_failures: bool,
    pub last_modified: f64,
    /// The host clients reach cumulo by, for the queue URL the poller receives from.
    pub host: String,
    /// Tags (TagResource on the mapping's ARN, or CreateEventSourceMapping's `Tags`).
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// The stream settings (DynamoDB stream sources; see `esm_streams`).
    #[serde(default)]
    pub stream: StreamSettings,
    /// `FilterCriteria` as given (`{"Filters": [{"Pattern": "..."}]}`); records no filter
    /// matches are dropped, as on AWS.
    #[serde(default)]
    pub filter_criteria: Option<serde_json::Value>,
}

/// What a mapping of a DynamoDB stream adds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamSettings {
    pub starting_position: Option<String>,
    /// -1 (AWS's default): retry until the records expire.
    pub maximum_retry_attempts: Option<i64>,
    pub bisect_batch_on_function_error: bool,
    /// `DestinationConfig.OnFailure.Destination`: an SQS queue or SNS topic ARN.
    pub on_failure: Option<String>,
    /// Stored and reported: records are never older than the stream's retention here.
    pub maximum_record_age: Option<i64>,
    /// Stored and reported: one shard is read by one poller.
    pub parallelization_factor: Option<i64>,
    /// Stored and reported, not applied (no tumbling-window state is kept).
    pub tumbling_window: Option<i64>,
    /// The next sequence number to deliver (the poller's checkpoint, kept through restarts).
    pub position: Option<u64>,
}

/// What CreateFunction takes.
#[derive(Debug, Clone, Default)]
pub struct CreateFunctionInput {
    pub name: String,
    pub runtime: Option<String>,
    pub handler: Option<String>,
    pub role: String,
    pub description: Option<String>,
    pub timeout: Option<i64>,
    pub memory_size: Option<i64>,
    pub environment: Option<BTreeMap<String, String>>,
    pub layers: Vec<String>,
    pub architectures: Vec<String>,
    pub ephemeral_storage: Option<i64>,
    pub tags: BTreeMap<String, String>,
    pub package_type: Option<String>,
    pub code: CodeInput,
    pub publish: bool,
    pub logging: Option<LoggingInput>,
    /// `TracingConfig.Mode` (default `PassThrough`).
    pub tracing_mode: Option<String>,
    /// `KMSKeyArn` (empty: AWS's default key).
    pub kms_key_arn: Option<String>,
}

/// A deployment package: bytes or an S3 object.
#[derive(Debug, Clone, Default)]
pub enum CodeInput {
    #[default]
    None,
    Zip(Vec<u8>),
    S3 {
        bucket: String,
        key: String,
        version: Option<String>,
    },
    Image,
}

/// What UpdateFunctionConfiguration takes: only what is present changes.
#[derive(Debug, Clone, Default)]
pub struct UpdateConfigInput {
    pub runtime: Option<String>,
    pub handler: Option<String>,
    pub role: Option<String>,
    pub description: Option<String>,
    pub timeout: Option<i64>,
    pub memory_size: Option<i64>,
    pub environment: Option<BTreeMap<String, String>>,
    pub layers: Option<Vec<String>>,
    pub ephemeral_storage: Option<i64>,
    pub logging: Option<LoggingInput>,
    pub tracing_mode: Option<String>,
    /// `KMSKeyArn`; an empty string goes back to AWS's default key.
    pub kms_key_arn: Option<String>,
    pub revision_id: Option<String>,
}

/// A version resolved for invocation or reporting: its number (`$LATEST`) and configuration.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub name: String,
    pub version: String,
    pub config: VersionConfig,
    /// The alias the caller named, if any (it is part of the invoked ARN).
    pub alias: Option<String>,
}
