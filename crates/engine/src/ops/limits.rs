//! DescribeAccountLimits: AWS's documented default quotas ("Understand CloudFormation
//! quotas"). Cumulo enforces the template quotas (`common`); these account-wide ones are
//! reported, not enforced: a local endpoint has no account to protect.

use crate::api::AccountLimit;

/// `(Name, Value)` in the order AWS lists them.
const LIMITS: &[(&str, i64)] = &[
    ("StackLimit", 2000),
    ("StackOutputsLimit", 200),
    ("ConcurrentResourcesLimit", 2500),
];

pub fn describe_account_limits() -> Vec<AccountLimit> {
    LIMITS
        .iter()
        .map(|(name, value)| AccountLimit {
            name: (*name).to_string(),
            value: *value,
        })
        .collect()
}
