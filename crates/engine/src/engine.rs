//! The [`Engine`]: CloudFormation's stack operations over the store, providers and world.
//! Operations validate and commit synchronously, then run in the background; create, update and
//! delete wait up to [`EngineConfig::sync_wait`] for the operation to finish so a client's first
//! DescribeStacks usually sees a terminal status.

use crate::api::*;
use crate::error::EngineError;
use crate::provider::ProviderRegistry;
use crate::world::World;
use cumulo_store::Store;
use std::sync::Arc;
use std::time::Duration;

/// Tunables of the engine.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// How long create/update/delete/execute calls wait for the operation to finish.
    pub sync_wait: Duration,
    /// How many resource operations of one stack operation run at once.
    pub parallelism: usize,
    /// Types without a provider fail instead of being stubbed.
    pub strict: bool,
    /// The host a WaitConditionHandle's URL names when the call that started the operation
    /// came with none (an in-process direct deploy): where that process serves the gateway.
    pub handle_host: Option<String>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            sync_wait: Duration::from_secs(1),
            parallelism: 64,
            strict: false,
            handle_host: None,
        }
    }
}

/// The stack engine. Cheap to clone; clones share state.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<crate::state::Inner>,
}

impl Engine {
    /// Opens the engine's tables, reloads every stack, and finishes as failed any operation
    /// that was running when the process died.
    pub fn new(
        store: Arc<Store>,
        registry: ProviderRegistry,
        world: Arc<dyn World>,
        config: EngineConfig,
    ) -> Result<Engine, EngineError> {
        crate::state::Inner::open(store, registry, world, config)
    }

    /// Waits until no operation is running on the stack (by ARN): for callers that need the
    /// outcome rather than the API's bounded wait (direct deploy, tests).
    pub async fn wait_for_stack(&self, stack_id: &str) {
        let running = self
            .inner
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(stack_id)
            .cloned();
        if let Some(running) = running {
            crate::exec::wait_done(&running).await;
        }
    }

    pub async fn create_stack(
        &self,
        caller: &Caller,
        input: CreateStackInput,
    ) -> Result<StackIdOutput, EngineError> {
        crate::ops::create::create_stack(self, caller, input).await
    }

    pub async fn update_stack(
        &self,
        caller: &Caller,
        input: UpdateStackInput,
    ) -> Result<StackIdOutput, EngineError> {
        crate::ops::update::update_stack(self, caller, input).await
    }

    pub async fn delete_stack(
        &self,
        caller: &Caller,
        input: DeleteStackInput,
    ) -> Result<(), EngineError> {
        crate::ops::delete::delete_stack(self, caller, input).await
    }

    pub async fn describe_stacks(
        &self,
        caller: &Caller,
        input: DescribeStacksInput,
    ) -> Result<DescribeStacksOutput, EngineError> {
        let mut out = crate::ops::read::describe_stacks(self, caller, input)?;
        for s in &mut out.stacks {
            s.drift = self.with_stack_drift(&s.stack_id);
        }
        Ok(out)
    }

    pub async fn list_stacks(
        &self,
        caller: &Caller,
        input: ListStacksInput,
    ) -> Result<ListStacksOutput, EngineError> {
        let mut out = crate::ops::read::list_stacks(self, caller, input)?;
        for s in &mut out.stack_summaries {
            s.drift = self.with_stack_drift(&s.stack_id);
        }
        Ok(out)
    }

    pub async fn describe_stack_events(
        &self,
        caller: &Caller,
        input: DescribeStackEventsInput,
    ) -> Result<DescribeStackEventsOutput, EngineError> {
        crate::ops::read::describe_stack_events(self, caller, input)
    }

    pub async fn describe_stack_resource(
        &self,
        caller: &Caller,
        stack_name: &str,
        logical_resource_id: &str,
    ) -> Result<StackResourceView, EngineError> {
        let mut view = crate::ops::read::describe_stack_resource(
            self,
            caller,
            stack_name,
            logical_resource_id,
        )?;
        self.with_resource_drift(&mut view);
        Ok(view)
    }

    pub async fn describe_stack_resources(
        &self,
        caller: &Caller,
        input: DescribeStackResourcesInput,
    ) -> Result<Vec<StackResourceView>, EngineError> {
        let mut out = crate::ops::read::describe_stack_resources(self, caller, input)?;
        out.iter_mut().for_each(|v| self.with_resource_drift(v));
        Ok(out)
    }

    pub async fn list_stack_resources(
        &self,
        caller: &Caller,
        input: ListStackResourcesInput,
    ) -> Result<ListStackResourcesOutput, EngineError> {
        let mut out = crate::ops::read::list_stack_resources(self, caller, input)?;
        out.stack_resource_summaries
            .iter_mut()
            .for_each(|v| self.with_resource_drift(v));
        Ok(out)
    }

    pub async fn get_template(
        &self,
        caller: &Caller,
        input: GetTemplateInput,
    ) -> Result<GetTemplateOutput, EngineError> {
        crate::ops::read::get_template(self, caller, input)
    }

    pub async fn get_template_summary(
        &self,
        caller: &Caller,
        input: TemplateInput,
    ) -> Result<TemplateSummaryOutput, EngineError> {
        crate::ops::validate::get_template_summary(self, caller, input).await
    }

    pub async fn validate_template(
        &self,
        caller: &Caller,
        input: TemplateInput,
    ) -> Result<ValidateTemplateOutput, EngineError> {
        crate::ops::validate::validate_template(self, caller, input).await
    }

    pub async fn create_change_set(
        &self,
        caller: &Caller,
        input: CreateChangeSetInput,
    ) -> Result<CreateChangeSetOutput, EngineError> {
        crate::ops::changeset::create_change_set(self, caller, input).await
    }

    pub async fn describe_change_set(
        &self,
        caller: &Caller,
        input: DescribeChangeSetInput,
    ) -> Result<ChangeSetView, EngineError> {
        crate::ops::changeset::describe_change_set(self, caller, input)
    }

    pub async fn describe_change_set_hooks(
        &self,
        caller: &Caller,
        input: ChangeSetRef,
    ) -> Result<ChangeSetHooksView, EngineError> {
        crate::ops::changeset::describe_change_set_hooks(self, caller, input)
    }

    pub async fn execute_change_set(
        &self,
        caller: &Caller,
        input: ExecuteChangeSetInput,
    ) -> Result<(), EngineError> {
        crate::ops::changeset::execute_change_set(self, caller, input).await
    }

    pub async fn delete_change_set(
        &self,
        caller: &Caller,
        input: ChangeSetRef,
    ) -> Result<(), EngineError> {
        crate::ops::changeset::delete_change_set(self, caller, input)
    }

    pub async fn list_change_sets(
        &self,
        caller: &Caller,
        input: ListChangeSetsInput,
    ) -> Result<ListChangeSetsOutput, EngineError> {
        crate::ops::changeset::list_change_sets(self, caller, input)
    }

    pub async fn list_exports(
        &self,
        caller: &Caller,
        next_token: Option<String>,
    ) -> Result<ListExportsOutput, EngineError> {
        crate::ops::read::list_exports(self, caller, next_token)
    }

    pub async fn list_imports(
        &self,
        caller: &Caller,
        input: ListImportsInput,
    ) -> Result<ListImportsOutput, EngineError> {
        crate::ops::read::list_imports(self, caller, input)
    }

    pub async fn rollback_stack(
        &self,
        caller: &Caller,
        input: RollbackStackInput,
    ) -> Result<StackIdOutput, EngineError> {
        crate::ops::rollback::rollback_stack(self, caller, input).await
    }

    pub async fn continue_update_rollback(
        &self,
        caller: &Caller,
        input: ContinueUpdateRollbackInput,
    ) -> Result<(), EngineError> {
        crate::ops::rollback::continue_update_rollback(self, caller, input).await
    }

    pub async fn set_stack_policy(
        &self,
        caller: &Caller,
        input: SetStackPolicyInput,
    ) -> Result<(), EngineError> {
        crate::ops::policy::set_stack_policy(self, caller, input).await
    }

    pub async fn get_stack_policy(
        &self,
        caller: &Caller,
        stack_name: &str,
    ) -> Result<GetStackPolicyOutput, EngineError> {
        crate::ops::policy::get_stack_policy(self, caller, stack_name).await
    }

    pub async fn cancel_update_stack(
        &self,
        caller: &Caller,
        input: CancelUpdateStackInput,
    ) -> Result<(), EngineError> {
        crate::ops::rollback::cancel_update_stack(self, caller, input).await
    }

    /// SignalResource: one signal for a resource waiting on its CreationPolicy; answers once
    /// the signal is written down.
    pub async fn signal_resource(
        &self,
        caller: &Caller,
        input: crate::ops::signal::SignalResourceInput,
    ) -> Result<(), EngineError> {
        crate::ops::signal::signal_resource(self, caller, input).await
    }

    /// A signal PUT to a WaitConditionHandle's URL (`token` follows
    /// [`crate::ops::signal::HANDLE_PATH`]).
    pub async fn signal_handle(
        &self,
        token: &str,
        signal: crate::ops::signal::Signal,
    ) -> Result<(), crate::ops::signal::HandleRefusal> {
        crate::ops::signal::signal_handle(self, token, signal).await
    }

    pub async fn update_termination_protection(
        &self,
        caller: &Caller,
        stack_name: &str,
        enable: bool,
    ) -> Result<StackIdOutput, EngineError> {
        crate::ops::termination::update_termination_protection(self, caller, stack_name, enable)
    }

    pub fn describe_type(
        &self,
        caller: &Caller,
        input: DescribeTypeInput,
    ) -> Result<TypeView, EngineError> {
        crate::ops::registry::describe_type(self, caller, input)
    }

    pub fn list_types(
        &self,
        caller: &Caller,
        input: ListTypesInput,
    ) -> Result<ListTypesOutput, EngineError> {
        crate::ops::registry::list_types(self, caller, input)
    }

    pub fn batch_describe_type_configurations(
        &self,
        identifiers: Vec<TypeConfigurationIdentifier>,
    ) -> Result<Vec<TypeConfigurationError>, EngineError> {
        crate::ops::registry::batch_describe_type_configurations(identifiers)
    }

    pub fn describe_account_limits(&self) -> Vec<AccountLimit> {
        crate::ops::limits::describe_account_limits()
    }

    /// What deploying a template would change, per resource and property (`cumulo diff`).
    pub fn diff(
        &self,
        caller: &Caller,
        input: crate::DiffInput,
    ) -> Result<Vec<crate::ResourceDiff>, EngineError> {
        crate::ops::diff::diff(self, caller, input)
    }

    /// Each resource's record against its live state, settled as asked (`cumulo drift`).
    pub async fn drift(
        &self,
        caller: &Caller,
        stack_name: &str,
        settle: crate::Settle,
        only: &[String],
    ) -> Result<Vec<crate::ResourceDrift>, EngineError> {
        let report = crate::ops::drift::drift(self, caller, stack_name, settle, only).await?;
        // A report is a detection the endpoint shows too; settling changes what it found.
        if settle == crate::Settle::Report {
            crate::ops::drift_api::record_report(self, caller, stack_name, &report)?;
        }
        Ok(report)
    }

    /// DetectStackDrift: returns the detection's id.
    pub async fn detect_stack_drift(
        &self,
        caller: &Caller,
        stack_name: &str,
        logical_resource_ids: &[String],
    ) -> Result<String, EngineError> {
        crate::ops::drift_api::detect_stack_drift(self, caller, stack_name, logical_resource_ids)
            .await
    }

    pub async fn detect_stack_resource_drift(
        &self,
        caller: &Caller,
        stack_name: &str,
        logical_resource_id: &str,
    ) -> Result<StackResourceDriftView, EngineError> {
        crate::ops::drift_api::detect_stack_resource_drift(
            self,
            caller,
            stack_name,
            logical_resource_id,
        )
        .await
    }

    pub async fn describe_stack_drift_detection_status(
        &self,
        caller: &Caller,
        detection_id: &str,
    ) -> Result<DriftDetectionStatusView, EngineError> {
        crate::ops::drift_api::describe_stack_drift_detection_status(self, caller, detection_id)
    }

    pub async fn describe_stack_resource_drifts(
        &self,
        caller: &Caller,
        input: DescribeStackResourceDriftsInput,
    ) -> Result<DescribeStackResourceDriftsOutput, EngineError> {
        crate::ops::drift_api::describe_stack_resource_drifts(self, caller, input)
    }

    /// Adopts existing resources into a stack (`cumulo import`). Returns the stack's ARN.
    pub async fn import_resources(
        &self,
        caller: &Caller,
        input: crate::ImportInput,
    ) -> Result<String, EngineError> {
        crate::ops::import::import_resources(self, caller, input).await
    }
}
