//! The one place both sides of a property comparison are put in one shape (seed 002's
//! `makeCanonicalizePropertiesFn`): the resource type's provider's
//! [`crate::Provider::canonicalize`] twin, applied to the record and to the template alike, by
//! the update path (skip an unchanged resource), change sets and `cumulo diff`, and drift. Using
//! one helper everywhere is what keeps a preview from forecasting a change the deploy will not
//! make.

use crate::provider::ProviderRegistry;
use crate::resolve::hash_properties;
use serde_json::Value;

/// `properties` in the provider's canonical shape (unchanged for a type without a provider).
pub(crate) fn canonical(
    registry: &ProviderRegistry,
    resource_type: &str,
    properties: &Value,
) -> Value {
    match registry.get(resource_type) {
        Some(p) => p.canonicalize(properties.clone()),
        None => properties.clone(),
    }
}

/// Whether two property bags of one type describe the same resource once canonicalized.
pub(crate) fn same(
    registry: &ProviderRegistry,
    resource_type: &str,
    old: &Value,
    new: &Value,
) -> bool {
    old == new
        || hash_properties(&canonical(registry, resource_type, old))
            == hash_properties(&canonical(registry, resource_type, new))
}
