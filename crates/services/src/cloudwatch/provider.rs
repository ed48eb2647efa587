pub(crate) fn register(
    _: &mut cumulo_engine::ProviderRegistry,
    _: &crate::providers::ProviderServices,
) {
}
