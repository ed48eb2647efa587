//! Subscription filters (Put/Describe/DeleteSubscriptionFilter): at most two per log group, each
//! a filter pattern and a destination (a Lambda function, a Kinesis stream, a Firehose stream or a
//! Logs destination). Validated with AWS's recorded codes and messages, stored in the group's
//! document and reported. A Lambda destination is invoked with the events that match (`delivery`);
//! Kinesis, Firehose and Logs destinations are stored and reported only (Kinesis and Firehose are
//! not emulated, see README).

use super::LogsService;
use super::filter::Pattern;
use super::groups::{group_not_found, invalid, now_ms};
use super::state::SubscriptionFilter;
use cumulo_wire::AwsError;

/// AWS's limit of subscription filters per log group.
const MAX_FILTERS: usize = 2;

/// What PutSubscriptionFilter takes.
#[derive(Debug, Clone, Default)]
pub struct PutSubscriptionInput {
    pub log_group_name: String,
    pub filter_name: String,
    pub filter_pattern: String,
    pub destination_arn: String,
    pub role_arn: Option<String>,
    pub distribution: Option<String>,
    pub apply_on_transformed_logs: bool,
}

fn filter_not_found() -> AwsError {
    AwsError::bad_request(
        "ResourceNotFoundException",
        "The specified subscription filter does not exist.",
    )
}

/// The service an ARN names (`arn:aws:<service>:...`).
fn vendor(arn: &str) -> &str {
    arn.split(':').nth(2).unwrap_or_default()
}

impl LogsService {
    /// PutSubscriptionFilter: creates the filter or replaces the one of that name.
    pub fn put_subscription_filter(
        &self,
        region: &str,
        input: PutSubscriptionInput,
    ) -> Result<(), AwsError> {
        let v = vendor(&input.destination_arn);
        if !input.destination_arn.starts_with("arn:")
            || !matches!(v, "lambda" | "kinesis" | "firehose" | "logs")
        {
            return Err(invalid(format!(
                "Invalid destinationArn: {}",
                input.destination_arn
            )));
        }
        if matches!(v, "kinesis" | "firehose") && input.role_arn.is_none() {
            return Err(invalid(format!(
                "destinationArn for vendor {v} cannot be used without roleArn"
            )));
        }
        if v == "lambda"
            && input.destination_arn.split(':').nth(4) != Some(self.account_id.as_str())
        {
            return Err(AwsError::bad_request(
                "AccessDeniedException",
                "Cross-account lambda invocation passing is not allowed. You must use DestinationPolicies to create cross account lambda triggers.",
            ));
        }
        if let Some(d) = &input.distribution
            && d != "Random"
            && d != "ByLogStream"
        {
            return Err(invalid(format!(
                "1 validation error detected: Value '{d}' at 'distribution' failed to satisfy constraint: Member must satisfy enum value set: [Random, ByLogStream]"
            )));
        }
        Pattern::parse(&input.filter_pattern)?;
        self.update_group(region, &input.log_group_name, |g| {
            let existing = g.subscription_filters.get(&input.filter_name);
            if existing.is_none() && g.subscription_filters.len() >= MAX_FILTERS {
                return Err(AwsError::bad_request(
                    "LimitExceededException",
                    "Resource limit exceeded.",
                ));
            }
            let creation_time = existing.map_or_else(now_ms, |f| f.creation_time);
            g.subscription_filters.insert(
                input.filter_name.clone(),
                SubscriptionFilter {
                    filter_name: input.filter_name.clone(),
                    filter_pattern: input.filter_pattern.clone(),
                    destination_arn: input.destination_arn.clone(),
                    role_arn: input.role_arn.clone(),
                    distribution: input
                        .distribution
                        .clone()
                        .unwrap_or_else(|| "ByLogStream".into()),
                    apply_on_transformed_logs: input.apply_on_transformed_logs,
                    creation_time,
                },
            );
            Ok(())
        })
    }

    /// DescribeSubscriptionFilters, in name order, those whose name starts with `prefix`.
    pub fn describe_subscription_filters(
        &self,
        region: &str,
        group: &str,
        prefix: Option<&str>,
    ) -> Result<Vec<SubscriptionFilter>, AwsError> {
        let regions = self.lock();
        let g = regions
            .get(region)
            .and_then(|r| r.get(group))
            .ok_or_else(group_not_found)?;
        Ok(g.subscription_filters
            .values()
            .filter(|f| prefix.is_none_or(|p| f.filter_name.starts_with(p)))
            .cloned()
            .collect())
    }

    pub fn delete_subscription_filter(
        &self,
        region: &str,
        group: &str,
        name: &str,
    ) -> Result<(), AwsError> {
        self.update_group(region, group, |g| {
            g.subscription_filters
                .remove(name)
                .map(|_| ())
                .ok_or_else(filter_not_found)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_is_the_arns_service() {
        assert_eq!(
            vendor("arn:aws:lambda:us-east-1:000000000000:function:f"),
            "lambda"
        );
        assert_eq!(
            vendor("arn:aws:firehose:us-east-1:000000000000:deliverystream/s"),
            "firehose"
        );
        assert_eq!(vendor("nonsense"), "");
    }
}
