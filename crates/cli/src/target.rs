//! Where direct deploy deploys to. [`Target`] is the seam: [`LocalTarget`] runs the same
//! CloudFormation engine in-process over the same emulated services `cumulo serve` runs, on
//! the store in the state directory, so `cumulo serve --data-dir <state dir>` serves exactly what
//! a deploy created. A real-AWS target (CloudFormation and S3 through the SDK) is a second
//! implementation of the same trait.

use crate::assembly::{Bootstrap, StackSpec};
use crate::lock::{self, Lock};
use crate::progress::Progress;
use anyhow::{Context, bail};
use cumulo_engine::{
    Caller, ContinueUpdateRollbackInput, CreateStackInput, DeleteStackInput,
    DescribeStackEventsInput, DescribeStackResourcesInput, DescribeStacksInput, DiffInput, Engine,
    EngineConfig, ImportInput, Parameter, ResourceDiff, ResourceDrift, RollbackStackInput, Settle,
    StackEvent, StackStatus, StackView, UpdateStackInput,
};
use cumulo_services::catalog::{self, Catalog};
use cumulo_services::s3::{PutInput, S3Service};
use cumulo_services::ssm::{PutParameterInput, SsmService};
use cumulo_services::{Config, Gateway, cloudformation::CloudFormationService};
use cumulo_store::{Durability, Store, StoreError};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How a deploy or destroy ended.
#[derive(Debug, Clone)]
pub struct Finished {
    pub stack: Option<StackView>,
    /// The template changed nothing (no update was needed).
    pub unchanged: bool,
}

/// Options of one deploy.
#[derive(Debug, Clone, Default)]
pub struct DeployOptions {
    /// Leave a failed deploy where it stopped instead of rolling it back.
    pub no_rollback: bool,
    /// Stack-level tags (`--tag`), which reach every resource that takes tags. Empty: a new
    /// stack has none and an existing one keeps its own, as `aws cloudformation deploy` does.
    pub tags: Vec<(String, String)>,
}

impl DeployOptions {
    fn stack_tags(&self) -> Vec<cumulo_engine::Tag> {
        self.tags
            .iter()
            .map(|(key, value)| cumulo_engine::Tag {
                key: key.clone(),
                value: value.clone(),
            })
            .collect()
    }
}

/// A cloud direct deploy can act on.
#[async_trait::async_trait]
pub trait Target: Send + Sync {
    /// Makes the environment look bootstrapped the way `cdk deploy` expects.
    async fn bootstrap(&self, b: &Bootstrap) -> anyhow::Result<()>;
    /// Uploads one asset where the template expects it.
    async fn publish(&self, bucket: &str, key: &str, body: Vec<u8>) -> anyhow::Result<()>;
    /// Creates or updates a stack, reporting every event, and waits for the end.
    async fn deploy(
        &self,
        spec: &StackSpec,
        options: &DeployOptions,
        progress: &mut Progress,
    ) -> anyhow::Result<Finished>;
    /// Deletes a stack and waits for the end. `None`: there was no such stack.
    async fn destroy(
        &self,
        stack: &str,
        progress: &mut Progress,
    ) -> anyhow::Result<Option<Finished>>;
    /// What a deploy of `spec` would change.
    fn diff(&self, spec: &StackSpec) -> anyhow::Result<Vec<ResourceDiff>>;
    async fn drift(
        &self,
        stack: &str,
        settle: Settle,
        only: &[String],
    ) -> anyhow::Result<Vec<ResourceDrift>>;
    async fn import(
        &self,
        spec: &StackSpec,
        resources: Vec<(String, String)>,
    ) -> anyhow::Result<String>;
    /// Takes the stack's deploy lock (refused while another owner holds an unexpired one).
    fn lock(&self, stack: &str) -> anyhow::Result<Lock>;
    /// Releases a lock this process holds (no-op if it was taken over).
    fn unlock(&self, lock: &Lock) -> anyhow::Result<()>;
    /// Drops whatever lock the stack has. Returns whether there was one.
    fn force_unlock(&self, stack: &str) -> anyhow::Result<bool>;
}

/// The embedded local cloud, on a state directory.
pub struct LocalTarget {
    store: Arc<Store>,
    s3: Arc<S3Service>,
    ssm: Arc<SsmService>,
    engine: Engine,
    region: String,
    account_id: String,
    /// Every service of this target, for reads through their typed operations.
    catalog: Arc<Catalog>,
    /// `host:port` of the gateway served while the target is open, if it is.
    served_at: Option<String>,
    /// The gateway served while a deploy or destroy runs (see [`Listener`]).
    _listener: Option<Listener>,
}

/// The whole gateway, over the deploy's own service instances, on an ephemeral loopback port
/// for as long as the target is open. Direct deploy has no `cumulo serve`, yet a custom
/// resource's handler answers by PUTting to its ResponseURL and the Lambda functions it runs
/// make SDK calls: both are pointed here, so a stack behaves exactly as under `cumulo serve`.
/// Binding a loopback socket costs microseconds, so it is not deferred until a custom resource
/// appears; it lives only while the command runs.
struct Listener {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How a deploy's waiting loop polls the engine for new events.
const POLL: Duration = Duration::from_millis(20);

impl LocalTarget {
    /// Opens the state directory: the store (exclusively: one process owns a state
    /// directory), the services, and the engine, which reloads every stack. With `serve`, the
    /// gateway is also served on an ephemeral loopback port (see [`Listener`]); that needs a
    /// running tokio runtime.
    pub fn open(dir: &Path, region: &str, serve: bool) -> anyhow::Result<Self> {
        Self::open_as(dir, region, &Config::default().account_id, serve)
    }

    /// [`LocalTarget::open`] acting as another account: a rehearsal's twin takes the
    /// inventoried account's id, so ARNs the recorded templates and parameters spell resolve.
    pub fn open_as(dir: &Path, region: &str, account: &str, serve: bool) -> anyhow::Result<Self> {
        let store = match Store::open(dir, Durability::Process) {
            Ok(s) => Arc::new(s),
            Err(StoreError::InUse { .. }) => bail!(
                "the state directory {} is in use by another cumulo process (a `cumulo serve --data-dir {}` or another deploy): one process owns a state directory at a time; stop it and run this again",
                dir.display(),
                dir.display()
            ),
            Err(e) => return Err(e).context(format!("opening {}", dir.display())),
        };
        lock::migrate(&store)?;
        let config = Config {
            account_id: account.to_string(),
            ..Config::default()
        };
        let socket = if serve {
            let s = std::net::TcpListener::bind(("127.0.0.1", 0))
                .context("binding the deploy's loopback listener")?;
            s.set_nonblocking(true)?;
            Some(s)
        } else {
            None
        };
        let callback_host = match &socket {
            Some(s) => Some(s.local_addr()?.to_string()),
            None => None,
        };
        let catalog = Catalog::new(catalog::Context {
            // The deploy waits on its own (and reports progress): the API's bounded wait is off.
            engine: EngineConfig {
                sync_wait: Duration::ZERO,
                ..EngineConfig::default()
            },
            callback_host: callback_host.clone(),
            ..catalog::Context::new(store.clone(), config.clone())
        });
        // The engine, and with it every service a provider acts on, is built now.
        let engine = catalog.get::<CloudFormationService>()?.engine().clone();
        let (s3, ssm) = (catalog.get::<S3Service>()?, catalog.get::<SsmService>()?);
        let listener = match socket {
            Some(s) => {
                let gateway = Gateway::over(&catalog);
                let socket = tokio::net::TcpListener::from_std(s)?;
                let task = tokio::spawn(crate::serve::accept_loop(
                    socket,
                    Arc::new(gateway),
                    Arc::new(crate::serve::Limits::default()),
                    std::future::pending(),
                ));
                Some(Listener { task })
            }
            None => None,
        };
        Ok(LocalTarget {
            store,
            s3,
            ssm,
            engine,
            region: region.to_string(),
            account_id: config.account_id,
            catalog,
            served_at: callback_host,
            _listener: listener,
        })
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// `host:port` of the gateway this target serves, when opened serving.
    pub fn served_at(&self) -> Option<&str> {
        self.served_at.as_deref()
    }

    /// A caller of this target's account and region, for the engine's typed operations.
    pub fn caller_of(&self) -> Caller {
        self.caller()
    }

    pub fn account_id(&self) -> &str {
        &self.account_id
    }

    pub fn region(&self) -> &str {
        &self.region
    }

    fn caller(&self) -> Caller {
        Caller {
            region: self.region.clone(),
            account_id: self.account_id.clone(),
            request_id: uuid::Uuid::new_v4().to_string(),
            host: String::new(),
        }
    }

    async fn stack(&self, name: &str) -> Option<StackView> {
        let input = DescribeStacksInput {
            stack_name: Some(name.to_string()),
            next_token: None,
        };
        self.engine
            .describe_stacks(&self.caller(), input)
            .await
            .ok()
            .and_then(|o| o.stacks.into_iter().next())
    }

    /// Events of the stack not yet seen, oldest first.
    async fn new_events(&self, stack_id: &str, seen: &mut HashSet<String>) -> Vec<StackEvent> {
        let mut fresh = Vec::new();
        let mut token = None;
        'pages: loop {
            let input = DescribeStackEventsInput {
                stack_name: stack_id.to_string(),
                next_token: token.take(),
            };
            let Ok(page) = self
                .engine
                .describe_stack_events(&self.caller(), input)
                .await
            else {
                break;
            };
            for e in page.stack_events {
                if seen.contains(&e.event_id) {
                    break 'pages;
                }
                fresh.push(e);
            }
            match page.next_token {
                Some(t) => token = Some(t),
                None => break,
            }
        }
        fresh.reverse();
        for e in &fresh {
            seen.insert(e.event_id.clone());
        }
        fresh
    }

    /// Reports the operation's events until it ends; the stack as it ended.
    async fn follow(
        &self,
        stack_id: &str,
        seen: &mut HashSet<String>,
        progress: &mut Progress,
    ) -> Option<StackView> {
        let wait = self.engine.wait_for_stack(stack_id);
        tokio::pin!(wait);
        loop {
            tokio::select! {
                _ = &mut wait => break,
                _ = tokio::time::sleep(POLL) => {
                    for e in self.new_events(stack_id, seen).await {
                        progress.event(&e);
                    }
                }
            }
        }
        for e in self.new_events(stack_id, seen).await {
            progress.event(&e);
        }
        self.stack(stack_id).await
    }

    /// The template as CreateStack/UpdateStack take it: the body when it fits AWS's 51,200
    /// bytes, otherwise uploaded to S3 and passed by URL, as `cdk deploy` does.
    async fn template_source(
        &self,
        spec: &StackSpec,
    ) -> anyhow::Result<(Option<String>, Option<String>)> {
        if spec.template.len() <= 51_200 {
            return Ok((Some(spec.template.clone()), None));
        }
        let (bucket, key) = match &spec.template_object {
            Some(at) => at.clone(),
            None => (
                format!("cumulo-templates-{}-{}", self.account_id, self.region),
                format!("{}/{}.json", spec.name, uuid::Uuid::new_v4()),
            ),
        };
        self.ensure_bucket(&bucket).await?;
        self.publish(&bucket, &key, spec.template.clone().into_bytes())
            .await?;
        Ok((
            None,
            Some(format!(
                "https://s3.{}.amazonaws.com/{bucket}/{key}",
                self.region
            )),
        ))
    }

    async fn ensure_bucket(&self, bucket: &str) -> anyhow::Result<()> {
        if self.s3.bucket_region(bucket).is_ok() {
            return Ok(());
        }
        let constraint = (self.region != "us-east-1").then_some(self.region.as_str());
        self.s3
            .create_bucket(&self.region, bucket, constraint)
            .await
            .map_err(|e| anyhow::anyhow!("creating bucket {bucket}: {}", e.message))
    }
}

fn parameters(spec: &StackSpec) -> Vec<Parameter> {
    spec.parameters
        .iter()
        .map(|(k, v)| Parameter {
            key: k.clone(),
            value: Some(v.clone()),
            use_previous_value: false,
        })
        .collect()
}

#[async_trait::async_trait]
impl Target for LocalTarget {
    async fn bootstrap(&self, b: &Bootstrap) -> anyhow::Result<()> {
        for bucket in &b.buckets {
            self.ensure_bucket(bucket).await?;
        }
        if let Some(name) = &b.version_parameter
            && self.ssm.get_parameter(&self.region, name, false).is_err()
        {
            let input = PutParameterInput {
                name: name.clone(),
                value: crate::assembly::BOOTSTRAP_VERSION.to_string(),
                param_type: Some("String".into()),
                description: Some(
                    "cumulo: the CDK bootstrap version direct deploy provides".into(),
                ),
                ..Default::default()
            };
            self.ssm
                .put_parameter(&self.region, input)
                .await
                .map_err(|e| anyhow::anyhow!("writing {name}: {}", e.message))?;
        }
        Ok(())
    }

    async fn publish(&self, bucket: &str, key: &str, body: Vec<u8>) -> anyhow::Result<()> {
        self.ensure_bucket(bucket).await?;
        let input = PutInput {
            key: key.to_string(),
            body: body.into(),
            ..Default::default()
        };
        self.s3
            .put_object(bucket, input)
            .map(|_| ())
            .map_err(|e| anyhow::anyhow!("uploading s3://{bucket}/{key}: {}", e.message))
    }

    async fn deploy(
        &self,
        spec: &StackSpec,
        options: &DeployOptions,
        progress: &mut Progress,
    ) -> anyhow::Result<Finished> {
        let caller = self.caller();
        let mut seen = HashSet::new();
        let mut existing = self.stack(&spec.name).await;
        // A stack whose first create failed cannot be updated (AWS's rule): delete it, with
        // whatever it left, and create it again, as `cdk deploy` does.
        if let Some(s) = existing.as_ref().filter(|s| {
            matches!(
                s.stack_status,
                StackStatus::ROLLBACK_COMPLETE
                    | StackStatus::ROLLBACK_FAILED
                    | StackStatus::CREATE_FAILED
                    | StackStatus::REVIEW_IN_PROGRESS
            )
        }) {
            let id = s.stack_id.clone();
            progress.note(&format!(
                "{}: the stack is in {} from a failed create; deleting it before creating it again",
                spec.name, s.stack_status
            ));
            self.new_events(&id, &mut seen).await;
            let input = DeleteStackInput {
                stack_name: id.clone(),
                ..Default::default()
            };
            self.engine.delete_stack(&caller, input).await?;
            let after = self.follow(&id, &mut seen, progress).await;
            if after.is_some_and(|s| s.stack_status != StackStatus::DELETE_COMPLETE) {
                bail!("{}: could not delete the failed stack first", spec.name);
            }
            existing = None;
        }
        // An update that failed part-way without DisableRollback (the process was killed, so
        // its rollback never ran) or whose rollback failed cannot be updated either: finish
        // the rollback first, as `cdk deploy` asks the user to. The rollback deletes what the
        // interrupted update created, the journaled creates included.
        if let Some(s) = existing.as_ref().filter(|s| {
            (s.stack_status == StackStatus::UPDATE_FAILED && !s.disable_rollback)
                || s.stack_status == StackStatus::UPDATE_ROLLBACK_FAILED
        }) {
            let id = s.stack_id.clone();
            progress.note(&format!(
                "{}: the stack is in {} from an interrupted update; rolling it back before updating it",
                spec.name, s.stack_status
            ));
            self.new_events(&id, &mut seen).await;
            if s.stack_status == StackStatus::UPDATE_FAILED {
                let input = RollbackStackInput {
                    stack_name: id.clone(),
                    ..Default::default()
                };
                self.engine.rollback_stack(&caller, input).await?;
            } else {
                let input = ContinueUpdateRollbackInput {
                    stack_name: id.clone(),
                    ..Default::default()
                };
                self.engine.continue_update_rollback(&caller, input).await?;
            }
            existing = self.follow(&id, &mut seen, progress).await;
            if let Some(s) = existing
                .as_ref()
                .filter(|s| s.stack_status != StackStatus::UPDATE_ROLLBACK_COMPLETE)
            {
                bail!(
                    "{}: could not roll back the interrupted update first: the stack is in {}",
                    spec.name,
                    s.stack_status
                );
            }
        }
        let (body, url) = self.template_source(spec).await?;
        let stack_id = match &existing {
            None => {
                let input = CreateStackInput {
                    stack_name: spec.name.clone(),
                    template_body: body,
                    template_url: url,
                    parameters: parameters(spec),
                    disable_rollback: Some(options.no_rollback),
                    capabilities: vec![
                        "CAPABILITY_IAM".into(),
                        "CAPABILITY_NAMED_IAM".into(),
                        "CAPABILITY_AUTO_EXPAND".into(),
                    ],
                    tags: options.stack_tags(),
                    ..Default::default()
                };
                self.engine.create_stack(&caller, input).await?.stack_id
            }
            Some(s) => {
                self.new_events(&s.stack_id, &mut seen).await;
                let input = UpdateStackInput {
                    stack_name: s.stack_id.clone(),
                    template_body: body,
                    template_url: url,
                    parameters: parameters(spec),
                    disable_rollback: Some(options.no_rollback),
                    capabilities: vec![
                        "CAPABILITY_IAM".into(),
                        "CAPABILITY_NAMED_IAM".into(),
                        "CAPABILITY_AUTO_EXPAND".into(),
                    ],
                    tags: (!options.tags.is_empty()).then(|| options.stack_tags()),
                    ..Default::default()
                };
                match self.engine.update_stack(&caller, input).await {
                    Ok(out) => out.stack_id,
                    Err(e) if e.message == "No updates are to be performed." => {
                        return Ok(Finished {
                            stack: Some(s.clone()),
                            unchanged: true,
                        });
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        };
        progress.start(&spec.name, spec.resource_count);
        let stack = self.follow(&stack_id, &mut seen, progress).await;
        Ok(Finished {
            stack,
            unchanged: false,
        })
    }

    async fn destroy(
        &self,
        stack: &str,
        progress: &mut Progress,
    ) -> anyhow::Result<Option<Finished>> {
        let Some(s) = self.stack(stack).await else {
            return Ok(None);
        };
        let mut seen = HashSet::new();
        self.new_events(&s.stack_id, &mut seen).await;
        let input = DeleteStackInput {
            stack_name: s.stack_id.clone(),
            ..Default::default()
        };
        let count = self
            .engine
            .describe_stack_resources(
                &self.caller(),
                DescribeStackResourcesInput {
                    stack_name: Some(s.stack_id.clone()),
                    ..Default::default()
                },
            )
            .await
            .map_or(0, |r| r.len());
        self.engine.delete_stack(&self.caller(), input).await?;
        progress.start(stack, count);
        let stack = self.follow(&s.stack_id, &mut seen, progress).await;
        Ok(Some(Finished {
            stack,
            unchanged: false,
        }))
    }

    fn diff(&self, spec: &StackSpec) -> anyhow::Result<Vec<ResourceDiff>> {
        let input = DiffInput {
            stack_name: spec.name.clone(),
            template: spec.template.clone(),
            parameters: parameters(spec),
        };
        Ok(self.engine.diff(&self.caller(), input)?)
    }

    async fn drift(
        &self,
        stack: &str,
        settle: Settle,
        only: &[String],
    ) -> anyhow::Result<Vec<ResourceDrift>> {
        Ok(self
            .engine
            .drift(&self.caller(), stack, settle, only)
            .await?)
    }

    async fn import(
        &self,
        spec: &StackSpec,
        resources: Vec<(String, String)>,
    ) -> anyhow::Result<String> {
        let input = ImportInput {
            stack_name: spec.name.clone(),
            template: spec.template.clone(),
            parameters: parameters(spec),
            resources,
        };
        Ok(self.engine.import_resources(&self.caller(), input).await?)
    }

    fn lock(&self, stack: &str) -> anyhow::Result<Lock> {
        lock::acquire(&self.store, &self.region, stack)
    }

    fn unlock(&self, lock: &Lock) -> anyhow::Result<()> {
        lock::release(&self.store, lock)
    }

    fn force_unlock(&self, stack: &str) -> anyhow::Result<bool> {
        lock::force(&self.store, &self.region, stack)
    }
}

/// The flags every direct-deploy command shares: where the state is and which region.
#[derive(clap::Args, Debug, Clone)]
pub struct TargetArgs {
    /// The state directory: the embedded services' data and the stacks' state
    /// (`cumulo serve --data-dir` on it serves what was deployed).
    #[arg(long, env = "CUMULO_STATE_DIR", default_value = ".cumulo")]
    pub state_dir: PathBuf,
    /// The region stacks are deployed in.
    #[arg(long, env = "AWS_REGION", default_value = "us-east-1")]
    pub region: String,
}

impl TargetArgs {
    pub fn open(&self) -> anyhow::Result<LocalTarget> {
        LocalTarget::open(&self.state_dir, &self.region, false)
    }

    /// [`TargetArgs::open`] for the commands that run custom resources and functions (deploy,
    /// destroy): the gateway is served on an ephemeral loopback port while they run.
    pub fn open_serving(&self) -> anyhow::Result<LocalTarget> {
        LocalTarget::open(&self.state_dir, &self.region, true)
    }
}

/// A runtime for one command (services call the store synchronously: two workers).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}
