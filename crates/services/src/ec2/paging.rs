//! Paging of the Describe calls, as AWS pages them: `MaxResults` (in the range botocore's model
//! gives the operation) bounds a page and `NextToken` resumes after it. Records are listed in id
//! order, so a token is the id the next page starts at: a page survives records deleted between
//! calls, as AWS's does.

use super::wire::Params;
use cumulo_wire::AwsError;

/// The `MaxResults` range of each paging Describe that answers through
/// [`super::wire::describe_ids`] (botocore's `min`/`max`; where the model gives none, AWS's
/// documented 5 to 1000).
const LIMITS: &[(&str, i64, i64)] = &[
    ("DescribeVpcs", 5, 1000),
    ("DescribeSubnets", 5, 1000),
    ("DescribeSecurityGroups", 5, 1000),
    ("DescribeRouteTables", 5, 100),
    ("DescribeInternetGateways", 5, 1000),
    ("DescribeNatGateways", 5, 1000),
    ("DescribeNetworkInterfaces", 5, 1000),
    ("DescribeNetworkAcls", 5, 1000),
    ("DescribeDhcpOptions", 5, 1000),
    ("DescribeEgressOnlyInternetGateways", 5, 255),
    ("DescribeFlowLogs", 5, 1000),
    ("DescribeVpcPeeringConnections", 5, 1000),
    ("DescribeVpcEndpoints", 5, 1000),
    ("DescribeVolumes", 5, 500),
    ("DescribeVpcEndpointServiceConfigurations", 5, 1000),
];

/// One page's bounds, read from the request.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Page {
    /// At most this many items; `None`: every one (no `MaxResults`).
    pub max: Option<usize>,
    /// The id the page starts at (`NextToken`).
    pub from: Option<String>,
}

impl Page {
    /// The page a request asks for. A `MaxResults` below the operation's range is AWS's
    /// InvalidParameterValue; one above it is served as the range's top, and an operation that
    /// does not page ignores both, as before.
    pub fn of(p: &Params) -> Result<Page, AwsError> {
        let action = p.get("Action").unwrap_or("");
        let Some(&(_, min, max)) = LIMITS.iter().find(|(a, _, _)| *a == action) else {
            return Ok(Page::default());
        };
        let from = p
            .get("NextToken")
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        let Some(n) = p.int("MaxResults")? else {
            return Ok(Page { max: None, from });
        };
        if n < min {
            return Err(AwsError::bad_request(
                "InvalidParameterValue",
                format!(
                    "Value ( {n} ) for parameter maxResults is invalid. Expecting a value greater than {min}."
                ),
            ));
        }
        let n = usize::try_from(n.min(max)).unwrap_or(usize::MAX);
        Ok(Page { max: Some(n), from })
    }

    /// The page of `items` (each with its id, in id order) and the token of the next page.
    pub fn take<T>(&self, items: Vec<(String, T)>) -> (Vec<T>, Option<String>) {
        let mut rest = items
            .into_iter()
            .skip_while(|(id, _)| self.from.as_deref().is_some_and(|f| id.as_str() < f));
        let mut page = Vec::new();
        for (id, item) in rest.by_ref() {
            if self.max.is_some_and(|m| page.len() >= m) {
                return (page, Some(id));
            }
            page.push(item);
        }
        (page, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize) -> Vec<(String, usize)> {
        (0..n).map(|i| (format!("vpc-{i:02}"), i)).collect()
    }

    #[test]
    fn pages_resume_at_their_token_and_end_without_one() {
        let first = Page {
            max: Some(2),
            from: None,
        };
        assert_eq!(first.take(items(5)), (vec![0, 1], Some("vpc-02".into())));
        let next = Page {
            max: Some(2),
            from: Some("vpc-04".into()),
        };
        assert_eq!(next.take(items(5)), (vec![4], None));
        assert_eq!(Page::default().take(items(3)), (vec![0, 1, 2], None));
    }

    #[test]
    fn a_token_whose_record_is_gone_resumes_after_it() {
        let page = Page {
            max: Some(5),
            from: Some("vpc-015".into()),
        };
        assert_eq!(page.take(items(3)), (vec![2], None));
    }
}
