//! CloudWatch Logs (awsJson1_1, `Logs_20140328.<Operation>`): log groups (retention, KMS key id,
//! class, tags), log streams, and log events with GetLogEvents / FilterLogEvents reads.
//!
//! Layout: [`LogsService`]'s typed operations (what Lambda and the CloudFormation providers call)
//! are in `groups` (groups, streams, tags) and `events` (put/get/filter), over [`state`]
//! (groups and streams in memory with write-through; events only in the store); `filter` is the
//! filter-pattern language; `subscriptions` the subscription filters, `delivery` their delivery to Lambda;
//! `wire` decodes requests and encodes responses.

mod account;
mod delivery;
mod events;
mod filter;
mod groups;
mod operations;
pub(crate) mod provider;
mod provider_account;
mod state;
mod subscriptions;
mod wire;

pub use events::{
    FilterInput, FilterOutput, FilteredEvent, GetEventsInput, GetEventsOutput, InputLogEvent,
    OutputLogEvent, PutLogEventsOutput, RejectedInfo,
};
pub use groups::{
    CreateLogGroupInput, DescribeGroupsInput, DescribeStreamsInput,
    name_from_arn as group_name_from_arn,
};
pub use state::{LogGroup, LogStream, SubscriptionFilter};
pub use subscriptions::PutSubscriptionInput;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{Config, GatewayError, Service};
use account::AccountRecords;
pub use account::{PutPolicyInput, PutQueryInput, QueryDefinition, ResourcePolicy};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::Regions;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The CloudWatch Logs service.
pub struct LogsService {
    store: Arc<Store>,
    /// Every group (with its streams) of every region. Held across the store commit of a
    /// mutation so memory and store change together; never across an await.
    regions: Mutex<Regions>,
    /// Resource policies and query definitions per region (`account.rs`).
    account: Mutex<HashMap<String, AccountRecords>>,
    account_id: String,
    /// Where subscription delivery finds Lambda (see `delivery`); empty outside a catalog.
    catalog: std::sync::Weak<crate::catalog::Catalog>,
}

impl LogsService {
    pub fn new(store: Arc<Store>, config: &Config) -> Result<Self, StoreError> {
        store.migrate("logs", state::MIGRATIONS)?;
        let (regions, problems) = store.read(state::load)?;
        let (account, more) = store.read(state::load_account)?;
        for p in problems.into_iter().chain(more) {
            eprintln!("cumulo: logs: skipped unreadable stored record: {p}");
        }
        Ok(LogsService {
            store,
            regions: Mutex::new(regions),
            account: Mutex::new(account),
            account_id: config.account_id.clone(),
            catalog: std::sync::Weak::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Regions> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_account(&self) -> MutexGuard<'_, HashMap<String, AccountRecords>> {
        self.account.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `arn:aws:logs:R:A:log-group:NAME:*`, the ARN DescribeLogGroups' `arn` and
    /// CloudFormation's `Arn` attribute report.
    pub fn group_arn(&self, region: &str, name: &str) -> String {
        format!("{}:*", self.group_arn_bare(region, name))
    }

    /// The ARN without the trailing `:*` (`logGroupArn`; what TagResource takes).
    pub fn group_arn_bare(&self, region: &str, name: &str) -> String {
        format!("arn:aws:logs:{region}:{}:log-group:{name}", self.account_id)
    }

    pub fn stream_arn(&self, region: &str, group: &str, stream: &str) -> String {
        format!("{}:log-stream:{stream}", self.group_arn_bare(region, group))
    }
}

impl Catalogued for LogsService {
    const SERVICE: Descriptor = Descriptor {
        name: "logs",
        protocols: &[Wire::Json11 {
            target_prefix: "Logs_20140328",
        }],
        ..Descriptor::BASE
    };
    type Deps = ();

    fn build(context: &Context, (): Self::Deps) -> Result<Self, GatewayError> {
        let mut logs = Self::new(context.store.clone(), &context.config)?;
        logs.catalog = context.catalog.clone();
        Ok(logs)
    }
}

#[async_trait::async_trait]
impl Service for LogsService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
