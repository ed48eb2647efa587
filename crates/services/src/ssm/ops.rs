//! Parameter Store's typed operations, callable in-process (the CloudFormation provider for
//! `AWS::SSM::Parameter` uses these); the wire adapter only decodes and encodes.

use super::SsmService;
pub use super::filters::StringFilter;
use super::filters::{self, FilterUse};
use super::state::{Parameter, ParameterType, Tier, Version, internal};
use super::validate::{self, MAX_TAGS, err, validation};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as TOKEN_B64;
use cumulo_wire::AwsError;
use std::collections::BTreeMap;

const MAX_VERSIONS: usize = 100;
const STANDARD_MAX_CHARS: usize = 4096;
const ADVANCED_MAX_CHARS: usize = 8192;
pub const DEFAULT_KEY_ID: &str = "alias/aws/ssm";
const DATA_TYPES: &[&str] = &["text", "aws:ec2:image", "aws:ssm:integration"];

/// Input of `PutParameter`.
#[derive(Debug, Clone, Default)]
pub struct PutParameterInput {
    pub name: String,
    pub value: String,
    pub param_type: Option<String>,
    pub description: Option<String>,
    pub key_id: Option<String>,
    pub overwrite: bool,
    pub allowed_pattern: Option<String>,
    pub tags: Vec<(String, String)>,
    pub tier: Option<String>,
    pub policies: Option<String>,
    pub data_type: Option<String>,
}

/// A parameter value as GetParameter(s)/GetParametersByPath report it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterView {
    pub name: String,
    pub param_type: ParameterType,
    /// Plaintext, or for SecureString without decryption the encrypted blob.
    pub value: String,
    pub version: i64,
    /// `:3` or `:label` when the caller asked for one.
    pub selector: Option<String>,
    pub last_modified: f64,
    pub arn: String,
    pub data_type: String,
}

/// AWS's public parameters under `/aws/service/` that name machine images (the AMI ids CDK
/// and templates read), answered from EC2's image catalogue: version 1, no account in the ARN.
fn public_parameter(region: &str, name: &str, selector: Option<&str>) -> Option<ParameterView> {
    if !name.starts_with("/aws/service/") || selector.is_some_and(|s| s != "1") {
        return None;
    }
    let value = crate::ec2::public_parameter(name)?;
    let data_type = if value.starts_with("ami-") {
        "aws:ec2:image"
    } else {
        "text"
    };
    Some(ParameterView {
        name: name.to_string(),
        param_type: ParameterType::String,
        value,
        version: 1,
        selector: selector.map(|s| format!(":{s}")),
        last_modified: 1_734_480_000.0,
        arn: format!("arn:aws:ssm:{region}::parameter{name}"),
        data_type: data_type.to_string(),
    })
}

/// Input of `GetParametersByPath`.
#[derive(Debug, Clone, Default)]
pub struct GetByPathInput {
    pub path: String,
    pub recursive: bool,
    pub filters: Vec<StringFilter>,
    pub with_decryption: bool,
    pub max_results: Option<i64>,
    pub next_token: Option<String>,
}

/// Input of `DescribeParameters`.
#[derive(Debug, Clone, Default)]
pub struct DescribeInput {
    pub filters: Vec<(String, Vec<String>)>,
    pub parameter_filters: Vec<StringFilter>,
    pub max_results: Option<i64>,
    pub next_token: Option<String>,
}

/// One page of a listing and the token for the next, if any.
pub type Page<T> = (Vec<T>, Option<String>);

/// Result of `LabelParameterVersion`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelOutcome {
    pub invalid_labels: Vec<String>,
    pub version: i64,
}

/// AWS answers ParameterNotFound with an empty message (botocore shows `...operation: `).
fn not_found() -> AwsError {
    err("ParameterNotFound", "")
}

fn version_not_found(name: &str, version: &str) -> AwsError {
    err(
        "ParameterVersionNotFound",
        format!(
            "Systems Manager could not find version {version} of {name}. Verify the version and try again."
        ),
    )
}

fn invalid_token() -> AwsError {
    err("InvalidNextToken", "The specified token is not valid.")
}

fn now_seconds() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

/// A page size within `[1, max]`, AWS's constraint message otherwise.
fn page_size(given: Option<i64>, max: i64, default: i64) -> Result<usize, AwsError> {
    let n = given.unwrap_or(default);
    if n < 1 || n > max {
        return Err(validation(format!(
            "1 validation error detected: Value '{n}' at 'maxResults' failed to satisfy constraint: Member must have value {}",
            if n < 1 {
                "greater than or equal to 1".to_string()
            } else {
                format!("less than or equal to {max}")
            }
        )));
    }
    Ok(n as usize)
}

fn encode_token(s: &str) -> String {
    TOKEN_B64.encode(s)
}

fn decode_token(t: &str) -> Result<String, AwsError> {
    TOKEN_B64
        .decode(t)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(invalid_token)
}

/// `name`, `name:3`, `name:label`, or the same with the parameter's ARN: (name, selector).
fn split_selector(requested: &str) -> (String, Option<String>) {
    let (base, rest) = match requested.strip_prefix("arn:") {
        Some(_) => match requested.split_once(":parameter/") {
            Some((_, after)) => ("/".to_string(), after),
            None => (String::new(), requested),
        },
        None => (String::new(), requested),
    };
    let (name, selector) = match rest.split_once(':') {
        Some((n, s)) => (n, Some(s.to_string())),
        None => (rest, None),
    };
    (format!("{base}{name}"), selector)
}

fn check_tags(tags: &[(String, String)]) -> Result<(), AwsError> {
    for (k, v) in tags {
        validate::check_tag(k, v)?;
    }
    Ok(())
}

fn too_many_tags() -> AwsError {
    err(
        "TooManyTagsError",
        "The Tags parameter contains too many tags. A resource can have at most 50 tags.",
    )
}

impl SsmService {
    fn arn(&self, region: &str, name: &str) -> String {
        format!(
            "arn:aws:ssm:{region}:{}:parameter/{}",
            self.account_id,
            name.trim_start_matches('/')
        )
    }

    fn user(&self) -> String {
        format!("arn:aws:iam::{}:root", self.account_id)
    }

    /// What SecureStrings written before SSM used KMS were bound to (see `crypto`).
    fn context(region: &str, name: &str) -> String {
        format!("{region}/{name}")
    }

    /// The value of a version as the caller may see it.
    pub(super) fn reveal(
        &self,
        region: &str,
        name: &str,
        v: &Version,
        with_decryption: bool,
    ) -> Result<String, AwsError> {
        if v.param_type == ParameterType::SecureString && with_decryption {
            self.cipher.decrypt(
                region,
                &self.arn(region, name),
                &Self::context(region, name),
                &v.value,
            )
        } else {
            Ok(v.value.clone())
        }
    }

    fn view(
        &self,
        region: &str,
        p: &Parameter,
        v: &Version,
        selector: Option<String>,
        with_decryption: bool,
    ) -> Result<ParameterView, AwsError> {
        Ok(ParameterView {
            name: p.name.clone(),
            param_type: v.param_type,
            value: self.reveal(region, &p.name, v, with_decryption)?,
            version: v.version,
            selector,
            last_modified: v.last_modified,
            arn: self.arn(region, &p.name),
            data_type: v.data_type.clone(),
        })
    }

    /// `PutParameter`: creates a parameter or (with `overwrite`) a new version. Returns the
    /// version and the tier it landed in.
    pub async fn put_parameter(
        &self,
        region: &str,
        input: PutParameterInput,
    ) -> Result<(i64, Tier), AwsError> {
        validate::check_new_name(&input.name)?;
        if input.value.is_empty() {
            return Err(validation(
                "1 validation error detected: Value '' at 'value' failed to satisfy constraint: Member must have length greater than or equal to 1.",
            ));
        }
        let requested_type = match input.param_type.as_deref() {
            None => None,
            Some(t) => Some(ParameterType::parse(t).ok_or_else(|| {
                validation(format!(
                    "1 validation error detected: Value '{t}' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [SecureString, StringList, String]"
                ))
            })?),
        };
        if input.overwrite && !input.tags.is_empty() {
            return Err(validation(
                "Invalid request: tags and overwrite can't be used together. To create a parameter with tags, please remove overwrite flag. To update tags for an existing parameter, please use AddTagsToResource or RemoveTagsFromResource.",
            ));
        }
        if input
            .description
            .as_ref()
            .is_some_and(|d| d.chars().count() > 1024)
        {
            return Err(validation(
                "1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 1024",
            ));
        }
        check_tags(&input.tags)?;
        if input.tags.len() > MAX_TAGS {
            return Err(too_many_tags());
        }

        let (out, commit) = {
            let mut locked = self.params.lock();
            let existing = locked.get(region, &input.name).cloned();
            let previous = existing.as_ref().and_then(|p| p.latest().cloned());
            if previous.is_some() && !input.overwrite {
                return Err(err(
                    "ParameterAlreadyExists",
                    "The parameter already exists. To overwrite this value, set the overwrite option in the request to true.",
                ));
            }
            let param_type = match (requested_type, &previous) {
                (Some(t), _) => t,
                (None, Some(prev)) => prev.param_type,
                (None, None) => {
                    return Err(validation(
                        "A parameter type is required when you create a parameter.",
                    ));
                }
            };
            let data_type = input
                .data_type
                .clone()
                .or_else(|| previous.as_ref().map(|p| p.data_type.clone()))
                .unwrap_or_else(|| "text".to_string());
            if !DATA_TYPES.contains(&data_type.as_str()) {
                return Err(validation(format!(
                    "The following data type is not supported: {data_type} (Data type names are all lowercase.)"
                )));
            }
            if data_type == "aws:ec2:image" {
                if param_type != ParameterType::String {
                    return Err(validation(
                        "Parameters of data type aws:ec2:image must be of type String.",
                    ));
                }
                let ami_ok = input.value.strip_prefix("ami-").is_some_and(|h| {
                    (8..=17).contains(&h.len()) && h.chars().all(|c| c.is_ascii_hexdigit())
                });
                if !ami_ok {
                    return Err(validation(format!(
                        "Parameter value, {}, is not a valid AMI ID (ami-12345678 or ami-1234567890abcdef0).",
                        input.value
                    )));
                }
            }
            let key_id = match (param_type, input.key_id.clone()) {
                (ParameterType::SecureString, Some(k)) => Some(k),
                (ParameterType::SecureString, None) => Some(
                    previous
                        .as_ref()
                        .and_then(|p| p.key_id.clone())
                        .unwrap_or_else(|| DEFAULT_KEY_ID.to_string()),
                ),
                (_, Some(_)) => {
                    return Err(validation(
                        "KeyId is required for SecureString type parameter only.",
                    ));
                }
                (_, None) => None,
            };
            let allowed_pattern = input
                .allowed_pattern
                .clone()
                .or_else(|| previous.as_ref().and_then(|p| p.allowed_pattern.clone()));
            if let Some(pattern) = &allowed_pattern {
                if pattern.chars().count() > 1024 {
                    return Err(validation(
                        "1 validation error detected: Value at 'allowedPattern' failed to satisfy constraint: Member must have length less than or equal to 1024",
                    ));
                }
                let re = regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|_| {
                    err(
                        "InvalidAllowedPatternException",
                        format!("The allowed pattern {pattern} is not a valid regular expression."),
                    )
                })?;
                let items: Vec<&str> = if param_type == ParameterType::StringList {
                    input.value.split(',').collect()
                } else {
                    vec![input.value.as_str()]
                };
                if !items.iter().all(|i| re.is_match(i)) {
                    return Err(err(
                        "ParameterPatternMismatchException",
                        format!(
                            "Parameter value, cannot be validated against allowedPattern: {pattern}"
                        ),
                    ));
                }
            }
            let policies = match &input.policies {
                Some(p) => Some(check_policies(p)?),
                None => previous.as_ref().and_then(|v| v.policies.clone()),
            };
            let value_chars = input.value.chars().count();
            let previous_tier = previous.as_ref().map(|p| p.tier);
            let tier = match input.tier.as_deref() {
                None => previous_tier.unwrap_or(Tier::Standard),
                Some("Standard") => Tier::Standard,
                Some("Advanced") => Tier::Advanced,
                Some("Intelligent-Tiering") => {
                    if value_chars > STANDARD_MAX_CHARS
                        || policies.is_some()
                        || previous_tier == Some(Tier::Advanced)
                    {
                        Tier::Advanced
                    } else {
                        Tier::Standard
                    }
                }
                Some(other) => {
                    return Err(validation(format!(
                        "1 validation error detected: Value '{other}' at 'tier' failed to satisfy constraint: Member must satisfy enum value set: [Standard, Advanced, Intelligent-Tiering]"
                    )));
                }
            };
            if tier == Tier::Standard && previous_tier == Some(Tier::Advanced) {
                return Err(validation(
                    "This parameter uses the advanced-parameter tier. You can't downgrade a parameter from the advanced-parameter tier to the standard-parameter tier. If necessary, you can delete the advanced parameter and recreate it as a standard parameter.",
                ));
            }
            if tier == Tier::Standard && value_chars > STANDARD_MAX_CHARS {
                return Err(validation(
                    "Standard tier parameters support a maximum parameter value of 4096 characters. To create a larger parameter value, upgrade the parameter to use the advanced-parameter tier. For more information, see https://docs.aws.amazon.com/systems-manager/latest/userguide/parameter-store-advanced-parameters.html",
                ));
            }
            if value_chars > ADVANCED_MAX_CHARS {
                return Err(validation(
                    "Advanced tier parameters support a maximum parameter value of 8192 characters.",
                ));
            }
            if tier == Tier::Standard && policies.is_some() {
                return Err(validation(
                    "Parameter policies are supported only for advanced parameters. Use the Advanced or Intelligent-Tiering tier.",
                ));
            }

            let mut param = existing.unwrap_or_else(|| Parameter {
                name: input.name.clone(),
                versions: Vec::new(),
                tags: BTreeMap::new(),
            });
            if param.versions.len() >= MAX_VERSIONS {
                let oldest = &param.versions[0];
                if !oldest.labels.is_empty() {
                    return Err(err(
                        "ParameterMaxVersionLimitExceeded",
                        format!(
                            "You attempted to create a new version of {} by calling the PutParameter API with the overwrite flag. Version {}, the oldest version, can't be deleted because it has a label associated with it. Move the label to another version of the parameter, and try again.",
                            input.name, oldest.version
                        ),
                    ));
                }
                param.versions.remove(0);
            }
            let version = previous.as_ref().map_or(1, |p| p.version + 1);
            let stored_value = if param_type == ParameterType::SecureString {
                self.cipher.encrypt(
                    region,
                    &self.arn(region, &input.name),
                    key_id.as_deref().unwrap_or(DEFAULT_KEY_ID),
                    &input.value,
                )?
            } else {
                input.value.clone()
            };
            param.versions.push(Version {
                version,
                value: stored_value,
                param_type,
                description: input
                    .description
                    .clone()
                    .or_else(|| previous.as_ref().and_then(|p| p.description.clone())),
                allowed_pattern,
                key_id,
                tier,
                data_type,
                policies,
                labels: Vec::new(),
                last_modified: now_seconds(),
                last_modified_user: self.user(),
            });
            param.tags.extend(input.tags);
            let commit = locked.save(region, param)?;
            ((version, tier), commit)
        };
        commit.await.map_err(internal)?;
        Ok(out)
    }

    /// `GetParameter`, with `name:version` / `name:label` selectors and ARNs.
    pub fn get_parameter(
        &self,
        region: &str,
        requested: &str,
        with_decryption: bool,
    ) -> Result<ParameterView, AwsError> {
        let (name, selector) = split_selector(requested);
        if let Some(public) = public_parameter(region, &name, selector.as_deref()) {
            return Ok(public);
        }
        let locked = self.params.lock();
        // An ARN cannot tell `/a` from `a` (both are `parameter/a`): the rooted name wins.
        let p = locked
            .get(region, &name)
            .or_else(|| {
                requested
                    .starts_with("arn:")
                    .then(|| locked.get(region, name.trim_start_matches('/')))
                    .flatten()
            })
            .ok_or_else(not_found)?;
        let v = match &selector {
            None => p.latest().ok_or_else(not_found)?,
            Some(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) => p
                .versions
                .iter()
                .find(|v| v.version.to_string() == *s)
                .ok_or_else(|| version_not_found(&name, s))?,
            Some(label) => p
                .versions
                .iter()
                .find(|v| v.labels.contains(label))
                .ok_or_else(not_found)?,
        };
        self.view(
            region,
            p,
            v,
            selector.map(|s| format!(":{s}")),
            with_decryption,
        )
    }

    /// `GetParameters`: the found ones, and the names that were not (as requested).
    pub fn get_parameters(
        &self,
        region: &str,
        names: &[String],
        with_decryption: bool,
    ) -> Result<(Vec<ParameterView>, Vec<String>), AwsError> {
        if names.is_empty() || names.len() > 10 {
            return Err(validation(format!(
                "1 validation error detected: Value '[{}]' at 'names' failed to satisfy constraint: Member must have length less than or equal to 10 and greater than or equal to 1",
                names.join(", ")
            )));
        }
        let mut found = Vec::new();
        let mut invalid = Vec::new();
        let mut seen: Vec<&String> = Vec::new();
        for n in names {
            if seen.contains(&n) {
                continue;
            }
            seen.push(n);
            match self.get_parameter(region, n, with_decryption) {
                Ok(v) => found.push(v),
                Err(e) if e.code == "ParameterNotFound" || e.code == "ParameterVersionNotFound" => {
                    invalid.push(n.clone())
                }
                Err(e) => return Err(e),
            }
        }
        Ok((found, invalid))
    }

    /// `GetParametersByPath`: name-ordered pages of at most 10.
    pub fn get_parameters_by_path(
        &self,
        region: &str,
        input: GetByPathInput,
    ) -> Result<Page<ParameterView>, AwsError> {
        validate::check_path(&input.path)?;
        filters::check(&input.filters, FilterUse::ByPath)?;
        let limit = page_size(input.max_results, 10, 10)?;
        let after = input.next_token.as_deref().map(decode_token).transpose()?;
        let locked = self.params.lock();
        let mut out = Vec::new();
        let mut next = None;
        for p in locked.all(region) {
            if after.as_ref().is_some_and(|a| p.name <= *a) {
                continue;
            }
            if !filters::under_path(&p.name, &input.path, input.recursive) {
                continue;
            }
            let Some(v) = filters::matches(p, &input.filters) else {
                continue;
            };
            if out.len() == limit {
                next = out.last().map(|l: &ParameterView| encode_token(&l.name));
                break;
            }
            out.push(self.view(region, p, v, None, input.with_decryption)?);
        }
        Ok((out, next))
    }

    /// `GetParameterHistory`: versions oldest first, as (parameter, version, value) for the wire.
    pub fn get_parameter_history(
        &self,
        region: &str,
        name: &str,
        with_decryption: bool,
        max_results: Option<i64>,
        next_token: Option<&str>,
    ) -> Result<Page<(Version, String)>, AwsError> {
        let limit = page_size(max_results, 50, 50)?;
        let start: usize = match next_token {
            Some(t) => decode_token(t)?.parse().map_err(|_| invalid_token())?,
            None => 0,
        };
        let locked = self.params.lock();
        let p = locked.get(region, name).ok_or_else(not_found)?;
        let mut out = Vec::new();
        for v in p.versions.iter().skip(start).take(limit) {
            let value = self.reveal(region, name, v, with_decryption)?;
            out.push((v.clone(), value));
        }
        let end = start + out.len();
        let next = (end < p.versions.len()).then(|| encode_token(&end.to_string()));
        Ok((out, next))
    }

    /// `DescribeParameters`: metadata (latest versions), name-ordered, paginated.
    /// One parameter's metadata and latest version, as `DescribeParameters` filtered on its
    /// exact name lists it (the provider's read-back): a lookup, not a scan of the region.
    pub fn describe_parameter(&self, region: &str, name: &str) -> Option<(Parameter, Version)> {
        let locked = self.params.lock();
        let p = locked.get(region, name)?;
        let v = p.latest()?.clone();
        let mut meta = p.clone();
        meta.versions.clear();
        Some((meta, v))
    }

    pub fn describe_parameters(
        &self,
        region: &str,
        input: DescribeInput,
    ) -> Result<Page<(Parameter, Version)>, AwsError> {
        if !input.filters.is_empty() && !input.parameter_filters.is_empty() {
            return Err(validation(
                "You can use either Filters or ParameterFilters in a single request.",
            ));
        }
        filters::check(&input.parameter_filters, FilterUse::Describe)?;
        let limit = page_size(input.max_results, 50, 50)?;
        let after = input.next_token.as_deref().map(decode_token).transpose()?;
        let locked = self.params.lock();
        let mut out: Vec<(Parameter, Version)> = Vec::new();
        let mut next = None;
        for p in locked.all(region) {
            if after.as_ref().is_some_and(|a| p.name <= *a) {
                continue;
            }
            if !filters::legacy_matches(p, &input.filters) {
                continue;
            }
            let Some(v) = filters::matches(p, &input.parameter_filters) else {
                continue;
            };
            if out.len() == limit {
                next = out.last().map(|(l, _)| encode_token(&l.name));
                break;
            }
            let mut meta = p.clone();
            meta.versions.clear();
            out.push((meta, v.clone()));
        }
        Ok((out, next))
    }

    /// `LabelParameterVersion`: moves the valid labels onto the version (latest if none given).
    pub async fn label_parameter_version(
        &self,
        region: &str,
        name: &str,
        version: Option<i64>,
        labels: &[String],
    ) -> Result<LabelOutcome, AwsError> {
        let (name, _) = split_selector(name);
        let (out, commit) = {
            let mut locked = self.params.lock();
            let mut p = locked.get(region, &name).cloned().ok_or_else(not_found)?;
            let target = match version {
                Some(v) => v,
                None => p.latest().map_or(1, |v| v.version),
            };
            let idx = p
                .versions
                .iter()
                .position(|v| v.version == target)
                .ok_or_else(|| version_not_found(&name, &target.to_string()))?;
            let (valid, invalid): (Vec<String>, Vec<String>) = labels
                .iter()
                .cloned()
                .partition(|l| validate::label_is_valid(l));
            let mut new_labels = p.versions[idx].labels.clone();
            for l in &valid {
                if !new_labels.contains(l) {
                    new_labels.push(l.clone());
                }
            }
            if new_labels.len() > 10 {
                return Err(err(
                    "ParameterVersionLabelLimitExceeded",
                    "A parameter version can have maximum 10 labels.Move one or more labels to another version and try again.",
                ));
            }
            for (i, v) in p.versions.iter_mut().enumerate() {
                if i == idx {
                    v.labels = new_labels.clone();
                } else {
                    v.labels.retain(|l| !valid.contains(l));
                }
            }
            let commit = locked.save(region, p)?;
            (
                LabelOutcome {
                    invalid_labels: invalid,
                    version: target,
                },
                commit,
            )
        };
        commit.await.map_err(internal)?;
        Ok(out)
    }

    /// `UnlabelParameterVersion`: (removed labels, labels that were not on the version).
    pub async fn unlabel_parameter_version(
        &self,
        region: &str,
        name: &str,
        version: i64,
        labels: &[String],
    ) -> Result<(Vec<String>, Vec<String>), AwsError> {
        let (removed, invalid, commit) = {
            let mut locked = self.params.lock();
            let mut p = locked.get(region, name).cloned().ok_or_else(not_found)?;
            let v = p
                .versions
                .iter_mut()
                .find(|v| v.version == version)
                .ok_or_else(|| version_not_found(name, &version.to_string()))?;
            let (removed, invalid): (Vec<String>, Vec<String>) =
                labels.iter().cloned().partition(|l| v.labels.contains(l));
            v.labels.retain(|l| !removed.contains(l));
            let commit = if removed.is_empty() {
                None
            } else {
                Some(locked.save(region, p)?)
            };
            (removed, invalid, commit)
        };
        if let Some(c) = commit {
            c.await.map_err(internal)?;
        }
        Ok((removed, invalid))
    }

    /// `DeleteParameter`.
    pub async fn delete_parameter(&self, region: &str, name: &str) -> Result<(), AwsError> {
        let commit = {
            let mut locked = self.params.lock();
            if locked.get(region, name).is_none() {
                return Err(not_found());
            }
            locked.remove(region, &[name.to_string()])
        };
        commit.await.map_err(internal)
    }

    /// `DeleteParameters`: (deleted, not found), all removed in one transaction.
    pub async fn delete_parameters(
        &self,
        region: &str,
        names: &[String],
    ) -> Result<(Vec<String>, Vec<String>), AwsError> {
        if names.is_empty() || names.len() > 10 {
            return Err(validation(
                "1 validation error detected: Value at 'names' failed to satisfy constraint: Member must have length less than or equal to 10 and greater than or equal to 1",
            ));
        }
        let (deleted, invalid, commit) = {
            let mut locked = self.params.lock();
            let mut deleted: Vec<String> = Vec::new();
            let mut invalid = Vec::new();
            for n in names {
                if locked.get(region, n).is_some() && !deleted.contains(n) {
                    deleted.push(n.clone());
                } else if !deleted.contains(n) {
                    invalid.push(n.clone());
                }
            }
            let commit = locked.remove(region, &deleted);
            (deleted, invalid, commit)
        };
        commit.await.map_err(internal)?;
        Ok((deleted, invalid))
    }

    fn tagged_parameter(
        &self,
        region: &str,
        resource_type: &str,
        resource_id: &str,
    ) -> Result<Parameter, AwsError> {
        const KNOWN: &[&str] = &[
            "Document",
            "ManagedInstance",
            "MaintenanceWindow",
            "PatchBaseline",
            "OpsItem",
            "OpsMetadata",
            "Automation",
            "Association",
        ];
        let invalid_id = || {
            err(
                "InvalidResourceId",
                "The resource ID is not valid. Verify that you entered the correct ID and try again.",
            )
        };
        if resource_type != "Parameter" {
            // Other taggable SSM resources are not emulated, so none of them exists.
            return Err(if KNOWN.contains(&resource_type) {
                invalid_id()
            } else {
                err(
                    "InvalidResourceType",
                    "The resource type is not valid. Verify that you entered the correct type and try again.",
                )
            });
        }
        let (name, _) = split_selector(resource_id);
        self.params
            .lock()
            .get(region, &name)
            .cloned()
            .ok_or_else(invalid_id)
    }

    /// `AddTagsToResource` (ResourceType `Parameter`): adds or replaces tags.
    pub async fn add_tags(
        &self,
        region: &str,
        resource_type: &str,
        resource_id: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        check_tags(tags)?;
        self.put_tags(region, resource_type, resource_id, tags)
            .await
    }

    /// CloudFormation's `aws:cloudformation:*` tags on a parameter it creates, which
    /// `AddTagsToResource` refuses from users.
    pub async fn add_system_tags(
        &self,
        region: &str,
        name: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        self.put_tags(region, "Parameter", name, tags).await
    }

    async fn put_tags(
        &self,
        region: &str,
        resource_type: &str,
        resource_id: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        let mut p = self.tagged_parameter(region, resource_type, resource_id)?;
        p.tags.extend(tags.iter().cloned());
        if crate::providers::system_tags::counted(p.tags.keys()) > MAX_TAGS {
            return Err(too_many_tags());
        }
        let commit = self.params.lock().save(region, p)?;
        commit.await.map_err(internal)
    }

    /// `RemoveTagsFromResource`.
    pub async fn remove_tags(
        &self,
        region: &str,
        resource_type: &str,
        resource_id: &str,
        keys: &[String],
    ) -> Result<(), AwsError> {
        let mut p = self.tagged_parameter(region, resource_type, resource_id)?;
        for k in keys {
            p.tags.remove(k);
        }
        let commit = self.params.lock().save(region, p)?;
        commit.await.map_err(internal)
    }

    /// `ListTagsForResource`.
    pub fn list_tags(
        &self,
        region: &str,
        resource_type: &str,
        resource_id: &str,
    ) -> Result<BTreeMap<String, String>, AwsError> {
        Ok(self
            .tagged_parameter(region, resource_type, resource_id)?
            .tags)
    }
}

/// Parameter policies: a JSON array of `{Type, Version, Attributes}` with AWS's three types.
fn check_policies(policies: &str) -> Result<String, AwsError> {
    let invalid = || {
        err(
            "InvalidPolicyTypeException",
            "The policy type is not supported. Parameter Store supports the following policy types: Expiration, ExpirationNotification, and NoChangeNotification.",
        )
    };
    let parsed: serde_json::Value = serde_json::from_str(policies).map_err(|_| {
        err(
            "InvalidPolicyAttributeException",
            "Invalid policies input: the policies must be a JSON array.",
        )
    })?;
    let items = parsed.as_array().ok_or_else(invalid)?;
    for item in items {
        let t = item.get("Type").and_then(|t| t.as_str()).unwrap_or("");
        if !matches!(
            t,
            "Expiration" | "ExpirationNotification" | "NoChangeNotification"
        ) {
            return Err(invalid());
        }
    }
    Ok(policies.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    fn service() -> SsmService {
        let store = Arc::new(Store::in_memory().unwrap());
        let kms = Arc::new(crate::kms::KmsService::new(store.clone(), &Config::default()).unwrap());
        SsmService::new(store, &Config::default(), kms).unwrap()
    }

    async fn put(svc: &SsmService, name: &str, value: &str) -> Result<(i64, Tier), AwsError> {
        svc.put_parameter(
            "us-east-1",
            PutParameterInput {
                name: name.into(),
                value: value.into(),
                param_type: Some("String".into()),
                overwrite: true,
                ..Default::default()
            },
        )
        .await
    }

    #[tokio::test]
    async fn describe_parameter_is_describe_parameters_on_one_exact_name() {
        let svc = service();
        put(&svc, "/a", "one").await.unwrap();
        put(&svc, "/a", "two").await.unwrap();
        put(&svc, "/a/b", "other").await.unwrap();
        let (meta, latest) = svc.describe_parameter("us-east-1", "/a").unwrap();
        assert_eq!((meta.name.as_str(), latest.version), ("/a", 2));
        assert_eq!(latest.value, "two");
        assert!(meta.versions.is_empty());
        let filter = StringFilter {
            key: "Name".into(),
            option: Some("Equals".into()),
            values: vec!["/a".into()],
        };
        let input = DescribeInput {
            parameter_filters: vec![filter],
            ..Default::default()
        };
        let (listed, _) = svc.describe_parameters("us-east-1", input).unwrap();
        assert_eq!(listed, vec![(meta, latest)]);
        assert!(svc.describe_parameter("us-east-1", "/missing").is_none());
        assert!(svc.describe_parameter("eu-west-1", "/a").is_none());
    }

    #[tokio::test]
    async fn history_keeps_the_last_hundred_versions_unless_the_oldest_is_labeled() {
        let svc = service();
        for i in 1..=100 {
            put(&svc, "/p", &format!("v{i}")).await.unwrap();
        }
        assert_eq!(put(&svc, "/p", "v101").await.unwrap().0, 101);
        let (history, _) = svc
            .get_parameter_history("us-east-1", "/p", false, None, None)
            .unwrap();
        assert_eq!(history.first().map(|(v, _)| v.version), Some(2));
        svc.label_parameter_version("us-east-1", "/p", Some(2), &["keep".into()])
            .await
            .unwrap();
        let err = put(&svc, "/p", "v102").await.unwrap_err();
        assert_eq!(err.code, "ParameterMaxVersionLimitExceeded");
        assert_eq!(
            svc.get_parameter("us-east-1", "/p", false).unwrap().version,
            101
        );
    }

    #[tokio::test]
    async fn failed_put_changes_nothing() {
        let svc = service();
        svc.put_parameter(
            "us-east-1",
            PutParameterInput {
                name: "/pat".into(),
                value: "12".into(),
                param_type: Some("String".into()),
                allowed_pattern: Some("\\d+".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(
            put(&svc, "/pat", "abc").await.unwrap_err().code,
            "ParameterPatternMismatchException"
        );
        let p = svc.get_parameter("us-east-1", "/pat", false).unwrap();
        assert_eq!((p.version, p.value.as_str()), (1, "12"));
    }

    #[test]
    fn selectors() {
        assert_eq!(split_selector("/a/b"), ("/a/b".into(), None));
        assert_eq!(split_selector("/a/b:3"), ("/a/b".into(), Some("3".into())));
        assert_eq!(
            split_selector("arn:aws:ssm:us-east-1:000000000000:parameter/a/b:prod"),
            ("/a/b".into(), Some("prod".into()))
        );
    }
}
