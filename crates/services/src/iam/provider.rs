pub fn register(_r: &mut cumulo_engine::ProviderRegistry, _s: &crate::providers::ProviderServices) {}
