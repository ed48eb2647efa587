//! The contract between the engine and a resource type.
//!
//! A provider receives fully resolved properties (intrinsics evaluated, dynamic references
//! substituted) and changes its service only through the service's typed operations. The engine
//! decides create / update-in-place / replace (from the createOnly table) and calls accordingly;
//! a provider never has to decide replacement itself.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Who is asking, for one provider call.
#[derive(Debug, Clone)]
pub struct ProviderContext {
    pub region: String,
    pub account_id: String,
    pub stack_name: String,
    /// The stack's ARN.
    pub stack_id: String,
    pub logical_id: String,
    pub resource_type: String,
    /// The caller's ClientRequestToken, else the request id of the call that started the operation.
    pub client_request_token: String,
    /// Stack-level tags, which AWS propagates to resources that support tags.
    pub stack_tags: Vec<(String, String)>,
    /// The `Host` the client used for the CloudFormation call that started the operation
    /// (empty for in-process callers): what URL-shaped identifiers are built with.
    pub host: String,
    /// The random part of a generated name for this create, decided and journaled by the
    /// engine before the provider is called, so a create cut short (the process killed between
    /// the service call and the state write) can be found again under the name it used (see
    /// [`Provider::created_identity`]). Empty: drawn at random.
    pub name_token: String,
}

impl ProviderContext {
    /// A physical name for a resource whose name property is absent, as CloudFormation makes
    /// them: `{stack}-{logical}-{RANDOM}` trimmed to `max_len`. `RANDOM` is
    /// [`ProviderContext::name_token`] when the engine decided it, so every call for one create
    /// names the same resource.
    pub fn generated_name(&self, max_len: usize, suffix: &str) -> String {
        let token = if self.name_token.is_empty() {
            name_token()
        } else {
            self.name_token.clone()
        };
        let mut base = format!("{}-{}", self.stack_name, self.logical_id);
        let room = max_len.saturating_sub(token.len() + 1 + suffix.len());
        base.truncate(room);
        format!("{base}-{token}{suffix}")
    }
}

/// 13 upper-case alphanumerics, like CloudFormation's generated-name suffixes.
pub(crate) fn name_token() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    (0..13)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// What a successful create or update yields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderOutcome {
    /// The physical id, which is also what `Ref` returns (AWS's "Return values: Ref").
    pub physical_id: String,
    /// Every `Fn::GetAtt` attribute of the type, by name (AWS's "Return values: Fn::GetAtt").
    pub attributes: Map<String, Value>,
    /// A limitation to show on the resource (`cumulo: ...`), e.g. for a no-op type.
    pub status_reason: Option<String>,
    /// Every attribute value is sensitive (seed 002's whole-bag `noEchoAttributes`; a custom
    /// resource's `NoEcho: true`). The values still reach dependents in clear; only what is
    /// written down (state, dependents' recorded properties, outputs) is masked. Per call, not
    /// persisted.
    pub no_echo: bool,
    /// The named attributes are sensitive (seed 002's `noEchoAttributeNames`, for a bag that
    /// mixes sensitive and ordinary members, such as a nested stack's outputs). A name the
    /// attributes do not carry is ignored.
    pub no_echo_attributes: Vec<String>,
    /// The complete property bag the provider really sent, when it deliberately narrowed or
    /// substituted what the template declared (seed 002's `effectiveProperties`); `None` means
    /// "what was declared was sent". Must pair with [`Provider::canonicalize`] for a narrowing.
    pub effective_properties: Option<Value>,
}

/// A live resource read back through its service (drift detection, import).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// The resource's properties in the template's shape, as the service reports them now. Only
    /// properties the service can report are present; a drift comparison walks the keys the
    /// record carries.
    pub properties: Map<String, Value>,
    /// Every `Fn::GetAtt` attribute, built by the same mapping create and update use, so an
    /// imported resource answers Ref and GetAtt exactly as a created one. Never an empty-string
    /// placeholder for a value that could not be read: omit the key instead.
    pub attributes: Map<String, Value>,
}

/// Why a provider call failed. The message is what the resource's ResourceStatusReason shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The service refused; the message is AWS-shaped, e.g.
    /// `Resource handler returned message: "..." (Service: Sqs, Status Code: 400, ...)`.
    #[error("{0}")]
    Failed(String),
    /// The physical resource does not exist (a delete of it is a success).
    #[error("resource {0} does not exist")]
    NotFound(String),
    /// The provider cannot read this type back (drift reports it NOT_CHECKED, import refuses it).
    #[error("cumulo: reading {0} back from its service is not implemented")]
    NotReadable(String),
    /// The resource was made (it has its physical id) but then did not become usable: a
    /// stabilisation wait failed, or a call after the create did. CloudFormation's handler
    /// already holds the id then, so the rollback (or a delete) removes what was made; the
    /// engine records `physical_id` on the failed resource for the same reason. The message is
    /// the resource's ResourceStatusReason.
    #[error("{message}")]
    FailedAfterCreate {
        physical_id: String,
        message: String,
    },
    /// A property the provider cannot apply: the resource fails rather than drop it silently.
    #[error("cumulo: property {property} of {resource_type} is not supported: {why}")]
    Unsupported {
        resource_type: String,
        property: String,
        why: String,
    },
}

impl ProviderError {
    /// This error for a resource that was already made under `physical_id`: what a provider
    /// answers when anything after its service's create fails. An error that already names a
    /// made resource keeps it.
    pub fn after_create(self, physical_id: &str) -> ProviderError {
        match self {
            e @ ProviderError::FailedAfterCreate { .. } => e,
            e => ProviderError::FailedAfterCreate {
                physical_id: physical_id.to_string(),
                message: e.to_string(),
            },
        }
    }

    /// The physical id of what a failed create had already made, if anything.
    pub fn made(&self) -> Option<&str> {
        match self {
            ProviderError::FailedAfterCreate { physical_id, .. } => Some(physical_id),
            _ => None,
        }
    }
}

/// One resource type's create / update / delete.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// Creates the resource from resolved properties (`Value::Null` when the template has none).
    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError>;

    /// Updates in place. Called only when no createOnly property changed; `old` is what the
    /// resource was last created or updated with.
    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError>;

    /// Deletes the resource. A resource that is already gone is a success (return `Ok` or
    /// `NotFound`; the engine treats both as deleted).
    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError>;

    /// Reads the live resource back through its service: `Ok(None)` when it no longer exists
    /// (AWS's not-found answer only). Drift compares [`Observed::properties`] with the record;
    /// import records [`Observed::attributes`]. `properties` is the record's (or, for import,
    /// the template's) resolved properties, for types whose identity needs more than the
    /// physical id. The default says the type cannot be read back.
    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let _ = (physical_id, properties);
        Err(ProviderError::NotReadable(ctx.resource_type.clone()))
    }

    /// The physical id [`Provider::create`] will give the resource for these resolved
    /// properties, known before any service call: from the name property, or from
    /// `ctx.generated_name(..)` (whose random part the engine decided beforehand). The engine
    /// journals it before calling `create`, so a create cut short by the process dying is
    /// found again through [`Provider::read`] and removed by the next operation on the
    /// resource (seed 002's fix-forward). `None` (the default): not knowable beforehand (the
    /// service or a handler picks the id); such a create cut short cannot be found.
    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let _ = (ctx, properties);
        None
    }

    /// Fn::GetAtt attributes another resource may change after this one was made (a VPC's
    /// `Ipv6CidrBlocks` once an AWS::EC2::VPCCidrBlock adds a block). The engine reads them back
    /// through [`Provider::read`] before it resolves a resource or the outputs that may use
    /// them, as CloudFormation answers them; every other attribute is the recorded one. The
    /// default: none.
    fn live_attributes(&self) -> &'static [&'static str] {
        &[]
    }

    /// Every Fn::GetAtt attribute a create or update of this type may answer (one the service
    /// has no value for at the time is left out of the answer, never invented). `None` (the
    /// default) means undeclared; an open type (a custom resource's attributes are its
    /// handler's Data) declares nothing on purpose. In debug builds the engine fails a
    /// provider that answers an attribute it did not declare, so the list stays the code's;
    /// the services' GetAtt-completeness test compares it with the registry schema.
    fn attributes(&self) -> Option<&'static [&'static str]> {
        None
    }

    /// Seed 002's `canonicalizeDesiredProperties`: the same pure narrowing the provider applies
    /// when it sends, so both sides of a diff (the record and the template) compare in one
    /// shape. Returns its input unchanged whenever nothing applies (the default).
    fn canonicalize(&self, properties: Value) -> Value {
        properties
    }
}

/// The type whose provider also serves every `Custom::*` type.
pub const CUSTOM_RESOURCE: &str = "AWS::CloudFormation::CustomResource";

/// Resource type name → provider. A new resource type is one module and one `register` line.
#[derive(Default, Clone)]
pub struct ProviderRegistry {
    providers: HashMap<String, Arc<dyn Provider>>,
}

impl ProviderRegistry {
    pub fn register(&mut self, resource_type: &str, provider: Arc<dyn Provider>) {
        self.providers.insert(resource_type.to_string(), provider);
    }

    /// The provider of a type. Every `Custom::<name>` type is a custom resource, served by
    /// the provider registered for `AWS::CloudFormation::CustomResource`.
    pub fn get(&self, resource_type: &str) -> Option<&Arc<dyn Provider>> {
        self.providers.get(resource_type).or_else(|| {
            resource_type
                .starts_with("Custom::")
                .then(|| self.providers.get(CUSTOM_RESOURCE))
                .flatten()
        })
    }

    pub fn types(&self) -> impl Iterator<Item = &str> {
        self.providers.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;

    #[async_trait::async_trait]
    impl Provider for Nothing {
        async fn create(
            &self,
            _: &ProviderContext,
            _: &Value,
        ) -> Result<ProviderOutcome, ProviderError> {
            Ok(ProviderOutcome::default())
        }
        async fn update(
            &self,
            _: &ProviderContext,
            _: &str,
            _: &Value,
            _: &Value,
        ) -> Result<ProviderOutcome, ProviderError> {
            Ok(ProviderOutcome::default())
        }
        async fn delete(
            &self,
            _: &ProviderContext,
            _: &str,
            _: &Value,
        ) -> Result<(), ProviderError> {
            Ok(())
        }
    }

    #[test]
    fn custom_types_fall_back_to_the_custom_resource_provider() {
        let mut r = ProviderRegistry::default();
        assert!(r.get("Custom::Anything").is_none());
        r.register(CUSTOM_RESOURCE, Arc::new(Nothing));
        assert!(r.get("Custom::Anything").is_some());
        assert!(r.get("AWS::Unknown::Type").is_none());
    }
}
