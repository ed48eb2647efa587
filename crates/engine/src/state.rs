//! The engine's shared state.

use crate::engine::{Engine, EngineConfig};
use crate::error::EngineError;
use crate::provider::ProviderRegistry;
use crate::world::World;
use cumulo_store::Store;
use std::sync::Arc;

pub(crate) struct Inner {
    pub store: Arc<Store>,
    pub registry: ProviderRegistry,
    pub world: Arc<dyn World>,
    pub config: EngineConfig,
}

impl Inner {
    pub fn open(
        store: Arc<Store>,
        registry: ProviderRegistry,
        world: Arc<dyn World>,
        config: EngineConfig,
    ) -> Result<Engine, EngineError> {
        Ok(Engine {
            inner: Arc::new(Inner {
                store,
                registry,
                world,
                config,
            }),
        })
    }
}
