//! The models of the emulated query and EC2 services for cumulo's own calls to them: a Step
//! Functions `aws-sdk:` Task writes its request from the operation's input shape and reads the
//! answer by its output shape, and an API Gateway AWS integration reads a query answer into
//! the JSON form AWS's services give it ([`cumulo_wire::query_model`]), and SSM's JSON answer
//! to the legacy query form gets that form's `null`s. Services that run on
//! their model (Auto Scaling, CloudWatch, ELB) lend theirs; the others' are subsets written by
//! `scripts/gen-query-model.py --client --ops-from <service dir>` (`query_models/*.json.gz`): the
//! inputs and outputs of the operations the emulation implements (SQS's and SSM's, read only
//! by API Gateway, with `--outputs`: their outputs alone). Each is parsed on its first
//! use, so a server that never calls a service this way holds none of them.

use cumulo_wire::query_model::QueryModel;
use std::io::Read;
use std::sync::LazyLock;

macro_rules! client_models {
    ($($name:ident => $file:literal),* $(,)?) => {
        $(static $name: LazyLock<Option<QueryModel>> =
            LazyLock::new(|| unpack(include_bytes!(concat!("query_models/", $file))));)*
    };
}

client_models! {
    CLOUDFORMATION => "cloudformation.json.gz",
    EC2 => "ec2.json.gz",
    IAM => "iam.json.gz",
    SNS => "sns.json.gz",
    SQS => "sqs.json.gz",
    SSM => "ssm.json.gz",
    STS => "sts.json.gz",
}

/// A gzipped model parsed (they are kept compressed: 46 KB in the binary instead of 411 KB).
fn unpack(gz: &[u8]) -> Option<QueryModel> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut text)
        .ok()?;
    QueryModel::parse(&text).ok()
}

/// The model of the service signed as `service` (`version` tells ELB's two query APIs apart).
pub(crate) fn model(service: &str, version: &str) -> Option<&'static QueryModel> {
    match service {
        "cloudformation" => CLOUDFORMATION.as_ref(),
        "ec2" => EC2.as_ref(),
        "iam" => IAM.as_ref(),
        "sns" => SNS.as_ref(),
        "sqs" => SQS.as_ref(),
        "ssm" => SSM.as_ref(),
        "sts" => STS.as_ref(),
        "autoscaling" => crate::autoscaling::model(),
        "monitoring" => crate::cloudwatch::wire::model().ok(),
        "elasticloadbalancing" if version == crate::elasticloadbalancing::classic::VERSION => {
            crate::elasticloadbalancing::classic::model()
        }
        "elasticloadbalancing" => crate::elasticloadbalancing::model(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every model parses and names the protocol's shapes it is read by.
    #[test]
    fn every_model_parses() {
        for (service, version) in [
            ("cloudformation", "2010-05-15"),
            ("ec2", "2016-11-15"),
            ("iam", "2010-05-08"),
            ("sns", "2010-03-31"),
            ("sqs", "2012-11-05"),
            ("ssm", ""),
            ("sts", "2011-06-15"),
            ("autoscaling", "2011-01-01"),
            ("monitoring", "2010-08-01"),
            ("elasticloadbalancing", "2015-12-01"),
            ("elasticloadbalancing", "2012-06-01"),
        ] {
            assert!(model(service, version).is_some(), "{service}");
        }
        assert!(
            model("ec2", "2016-11-15")
                .unwrap()
                .has_operation("DescribeVpcs")
        );
        assert!(
            model("elasticloadbalancing", "2012-06-01")
                .unwrap()
                .has_operation("DescribeLoadBalancers")
        );
    }
}
