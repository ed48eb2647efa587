//! The one place both sides of a property comparison are put in one shape (seed 002's
//! `makeCanonicalizePropertiesFn`): the resource type's provider's
//! [`crate::Provider::canonicalize`] twin, applied to the record and to the template alike, by
//! the update path (skip an unchanged resource), change sets and `cumulo diff`, and drift. Using
//! one helper everywhere is what keeps a preview from forecasting a change the deploy will not
//! make.

use crate::provider::ProviderRegistry;
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
///
/// Compared as values, which is what comparing their [`crate::resolve::hash_properties`]
/// means (object members in any order, everything else as written), without building and
/// hashing two texts: that was ~3% of a 500-resource update's CPU.
pub(crate) fn same(
    registry: &ProviderRegistry,
    resource_type: &str,
    old: &Value,
    new: &Value,
) -> bool {
    old == new || canonical(registry, resource_type, old) == canonical(registry, resource_type, new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::hash_properties;
    use serde_json::json;

    /// `same` answers what comparing the two hashes did, on the cases where a text and a value
    /// comparison could part: member order, number forms, nesting, null, strings that look
    /// like numbers.
    #[test]
    fn same_agrees_with_comparing_hashes() {
        let values = [
            json!({"A": 1, "B": [1, 2, {"C": "x"}]}),
            json!({"B": [1, 2, {"C": "x"}], "A": 1}),
            json!({"A": 1.0, "B": [1, 2, {"C": "x"}]}),
            json!({"A": "1", "B": [1, 2, {"C": "x"}]}),
            json!({"A": 1, "B": [2, 1, {"C": "x"}]}),
            json!({"A": 1, "B": [1, 2, {"C": null}]}),
            json!({"A": 1, "B": [1, 2, {}]}),
            json!({"A": 1}),
            json!(null),
            json!([]),
            json!({}),
        ];
        let registry = ProviderRegistry::default();
        for a in &values {
            for b in &values {
                assert_eq!(
                    same(&registry, "AWS::X::Y", a, b),
                    hash_properties(a) == hash_properties(b),
                    "{a} against {b}"
                );
            }
        }
    }
}
