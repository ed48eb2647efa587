//! CloudFormation (awsQuery, API 2010-05-15): the wire adapter over the stack engine
//! (`cumulo-engine`), the [`World`](cumulo_engine::World) the engine reads templates and SSM
//! values through, and the registry of the services' resource providers.
//!
//! Layout: [`wire`] decodes each operation's members into the engine's typed inputs,
//! [`encode`] renders the engine's views as AWS's XML, [`world`] reaches S3 and SSM through
//! their typed operations, [`signal_url`] takes the signals PUT to a WaitConditionHandle's URL. The engine knows nothing of HTTP; this module knows nothing of how
//! stacks are provisioned.

mod encode;
mod signal_url;
#[cfg(test)]
mod tests;
mod wire;
pub mod world;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::providers::ProviderServices;
use crate::{Config, GatewayError, Service};
use cumulo_engine::{Engine, EngineConfig, EngineError};
use cumulo_store::Store;
use cumulo_wire::{AwsRequest, AwsResponse};
use std::sync::Arc;

/// The response namespace (`xmlNamespace` in botocore's model).
pub const NS: &str = "http://cloudformation.amazonaws.com/doc/2010-05-15/";

pub struct CloudFormationService {
    engine: Engine,
}

impl CloudFormationService {
    /// Builds the provider registry over `services` and opens the engine on `store`.
    pub fn new(
        store: Arc<Store>,
        _config: &Config,
        services: ProviderServices,
        engine_config: EngineConfig,
    ) -> Result<Self, EngineError> {
        let registry = crate::providers::registry(&services);
        let world = Arc::new(world::ServiceWorld {
            s3: services.s3.clone(),
            ssm: services.ssm.clone(),
            secretsmanager: services.secretsmanager.clone(),
            sns: services.sns.clone(),
            lambda: services.lambda.clone(),
        });
        Ok(CloudFormationService {
            engine: Engine::new(store, registry, world, engine_config)?,
        })
    }

    /// The engine, for in-process callers (direct deploy).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }
}

impl Catalogued for CloudFormationService {
    const SERVICE: Descriptor = Descriptor {
        name: "cloudformation",
        protocols: &[Wire::Query {
            version: "2010-05-15",
            namespace: NS,
        }],
        ..Descriptor::BASE
    };
    const STORE_OWNER: &'static str = "cfn";
    type Deps = ProviderServices;

    fn build(context: &Context, services: Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(
            context.store.clone(),
            &context.config,
            services,
            // A handle's URL names the catalog's callback listener when the caller has no host.
            cumulo_engine::EngineConfig {
                handle_host: context.callback_host.clone(),
                ..context.engine.clone()
            },
        )?)
    }
}

#[async_trait::async_trait]
impl Service for CloudFormationService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        if req.raw_path.starts_with(cumulo_engine::HANDLE_PATH) {
            return signal_url::accept(&self.engine, &req).await;
        }
        wire::handle(&self.engine, &req).await
    }
}
