//! The resource types that attach one policy document to each target of a list and own nothing
//! else (AWS::SQS::QueuePolicy's `Queues`, AWS::SNS::TopicPolicy's `Topics`). Such a type is a
//! declaration, a [`PolicyTarget`]: its names and the two calls its service answers (set a
//! target's policy, read a target's attributes); [`AttachedPolicy`] is its whole provider.
//!
//! What every such type does, as AWS's handlers do: create sets the policy on every target and
//! answers a generated id (Ref and `Id`); update sets it on the new targets and removes it from
//! the targets no longer listed; delete removes it from every target that still exists; read
//! reports the targets still there and the first one's policy.

use super::{check_known, failed, json_text, list, object, readback, required, scalar_value};
use cumulo_engine::{Observed, Provider, ProviderContext, ProviderError, ProviderOutcome};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

/// One policy-attaching resource type, declared.
#[async_trait::async_trait]
pub(crate) trait PolicyTarget: Send + Sync + 'static {
    /// The resource type (`AWS::SQS::QueuePolicy`).
    const TYPE: &'static str;
    /// The property listing the targets (`Queues`).
    const TARGETS: &'static str;
    /// The service as the handler's messages name it (`Sqs`).
    const SERVICE: &'static str;

    /// Sets a target's policy; `""` removes it (the service's default policy applies again).
    async fn set_policy(
        &self,
        ctx: &ProviderContext,
        target: &str,
        policy: &str,
    ) -> Result<(), AwsError>;

    /// The target's attributes (its `Policy` among them), `None` when the target is gone.
    fn attributes(
        &self,
        ctx: &ProviderContext,
        target: &str,
    ) -> Result<Option<Vec<(String, String)>>, AwsError>;
}

/// The provider of every [`PolicyTarget`].
pub(crate) struct AttachedPolicy<T>(pub T);

/// The document and the targets, validated.
fn parts<T: PolicyTarget>(properties: &Value) -> Result<(String, Vec<String>), ProviderError> {
    let props = object(T::TYPE, properties)?;
    check_known(T::TYPE, &props, &["PolicyDocument", T::TARGETS], &[])?;
    let doc = json_text(&props, "PolicyDocument")?.ok_or_else(|| {
        ProviderError::Failed(
            "Properties validation failed for resource with message: #: required key [PolicyDocument] not found"
                .into(),
        )
    })?;
    let targets = list(&props, T::TARGETS)?
        .iter()
        .map(|t| {
            scalar_value(t).ok_or_else(|| {
                ProviderError::Failed(format!(
                    "Properties validation failed for resource with message: #/{}: expected type: String",
                    T::TARGETS
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if targets.is_empty() {
        required(&props, T::TARGETS)?;
    }
    Ok((doc, targets))
}

fn outcome(physical_id: String) -> ProviderOutcome {
    ProviderOutcome {
        attributes: Map::from_iter([("Id".to_string(), json!(physical_id))]),
        physical_id,
        ..Default::default()
    }
}

impl<T: PolicyTarget> AttachedPolicy<T> {
    async fn attach(
        &self,
        ctx: &ProviderContext,
        doc: &str,
        targets: &[String],
    ) -> Result<(), ProviderError> {
        for t in targets {
            self.0
                .set_policy(ctx, t, doc)
                .await
                .map_err(|e| failed(ctx, T::SERVICE, e))?;
        }
        Ok(())
    }

    /// Removes the policy from each target that still exists (one that is gone has none left).
    async fn detach<'a>(
        &self,
        ctx: &ProviderContext,
        targets: impl IntoIterator<Item = &'a String>,
    ) -> Result<(), ProviderError> {
        for t in targets {
            if matches!(self.0.attributes(ctx, t), Ok(Some(_))) {
                self.0
                    .set_policy(ctx, t, "")
                    .await
                    .map_err(|e| failed(ctx, T::SERVICE, e))?;
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl<T: PolicyTarget> Provider for AttachedPolicy<T> {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Id"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let (doc, targets) = parts::<T>(properties)?;
        self.attach(ctx, &doc, &targets).await?;
        Ok(outcome(ctx.generated_name(255, "")))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let (_, old_targets) = parts::<T>(old)?;
        let (doc, targets) = parts::<T>(new)?;
        self.attach(ctx, &doc, &targets).await?;
        let dropped: Vec<&String> = old_targets
            .iter()
            .filter(|t| !targets.contains(t))
            .collect();
        self.detach(ctx, dropped).await?;
        Ok(outcome(physical_id.to_string()))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError> {
        // Properties that never validated attached nothing.
        let Ok((_, targets)) = parts::<T>(properties) else {
            return Ok(());
        };
        self.detach(ctx, &targets).await
    }

    /// The policy as the recorded targets hold it: the first that still exists answers
    /// PolicyDocument (absent when its policy was removed); gone when no target is left.
    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let props = object(T::TYPE, properties)?;
        let targets = list(&props, T::TARGETS)?.iter().filter_map(scalar_value);
        let attrs = targets.map(|t| {
            let got = self
                .0
                .attributes(ctx, &t)
                .map_err(|e| failed(ctx, T::SERVICE, e));
            (t, got)
        });
        readback::attached_policy(T::TARGETS, physical_id, attrs)
    }

    fn canonicalize(&self, properties: Value) -> Value {
        readback::canonical_attributes(properties, &[], &["PolicyDocument"])
    }
}
