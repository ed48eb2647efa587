//! SNS (query protocol, API 2010-03-31): topics, subscriptions, filter policies, and delivery of
//! published messages to SQS queues (through `SqsService::send_message_to_arn`, never SQS's
//! tables).
//!
//! Delivery by protocol, decided here because cumulo runs without outside network access by
//! default:
//! - `sqs`: confirmed at once, delivered (raw or in AWS's JSON envelope), filter policies and
//!   FIFO group/deduplication ids applied; a failed delivery goes to the subscription's
//!   RedrivePolicy dead-letter queue when it has one.
//! - `http`: pending until confirmed; the SubscriptionConfirmation and each Notification are
//!   POSTed to the endpoint as AWS does (best effort, one attempt, plain http only).
//! - `https`, `email`, `email-json`: stored as PendingConfirmation, as AWS does until the owner
//!   confirms; cumulo sends nothing to them (no TLS client, no mail), so their token never leaves
//!   cumulo and they stay pending.
//! - `sms`, `lambda`, `firehose`, `application`: confirmed at once as AWS does; messages are not
//!   delivered until those services are emulated.

mod attributes;
mod delivery;
mod filter;
mod http_post;
pub(crate) mod provider;
mod publish;
mod state;
mod subscriptions;
mod topics;
mod wire;

pub use publish::{
    BatchEntry, BatchFailure, BatchOutcome, MessageAttribute, PublishInput, PublishOutput,
};
pub use subscriptions::{SubscribeInput, SubscriptionSummary};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::sqs::SqsService;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use std::sync::Arc;

/// The SNS service: typed operations in `topics`, `subscriptions` and `publish`; the query
/// adapter in `wire`.
pub struct SnsService {
    state: state::SnsStore,
    sqs: Arc<SqsService>,
    account_id: String,
    signer: delivery::Signer,
    fifo: publish::FifoState,
}

impl SnsService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        sqs: Arc<SqsService>,
    ) -> Result<Self, StoreError> {
        Ok(SnsService {
            state: state::SnsStore::open(store)?,
            sqs,
            account_id: config.account_id.clone(),
            signer: delivery::Signer::new(),
            fifo: publish::FifoState::default(),
        })
    }
}

impl Catalogued for SnsService {
    const SERVICE: Descriptor = Descriptor {
        name: "sns",
        protocols: &[Wire::Query {
            version: "2010-03-31",
            namespace: wire::NS,
        }],
        ..Descriptor::BASE
    };
    type Deps = (Arc<SqsService>,);

    fn build(context: &Context, (sqs,): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config, sqs)?)
    }
}

#[async_trait::async_trait]
impl Service for SnsService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req).await
    }
}
