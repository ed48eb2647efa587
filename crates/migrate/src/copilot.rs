//! What AWS Copilot's custom resources do, from the seed's reading of the archived Copilot
//! source (`cf-custom-resources/lib/*.js`): which handler backs a resource, what it creates
//! outside CloudFormation, what its Delete destroys, its Terraform equivalent, and whether the
//! migration covers it. Everything generic (fates, cascades, reports) works without this
//! module; it only names Copilot's handlers and scopes.
//!
//! Two type names are ambiguous: `Custom::CustomDomainFunction` is backed by custom-domain.js
//! (env), custom-domain-app-runner.js (Request-Driven Web Service) and wkld-custom-domain.js
//! (Static Site); `Custom::CertificateValidationFunction` by dns-cert-validator.js (env) and
//! wkld-cert-validator.js (Static Site). They are told apart by stack kind and properties.

use crate::inventory::model::{CopilotKind, CustomResource};
use serde::Serialize;

/// One of Copilot's 14 Lambda files: 13 back `Custom::*` types; the backlog calculator is a
/// scheduled function, listed because a Worker stack carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Handler {
    AlbRulePriorityGenerator,
    BacklogPerTaskCalculator,
    BucketCleaner,
    CertReplicator,
    CustomDomain,
    CustomDomainAppRunner,
    DesiredCountDelegation,
    DnsCertValidator,
    DnsDelegation,
    EnvController,
    TriggerStateMachine,
    UniqueJsonValues,
    WkldCertValidator,
    WkldCustomDomain,
}

/// What the seed says about one handler.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct HandlerFacts {
    pub file: &'static str,
    /// What it creates outside CloudFormation.
    pub creates_out_of_band: &'static str,
    /// What its Delete does.
    pub on_delete: &'static str,
    pub destructive: bool,
    pub terraform: &'static str,
    /// `None`: in scope. `Some(feature)`: the stack is blocked because of that feature.
    pub blocked_feature: Option<&'static str>,
}

impl Handler {
    pub const ALL: [Handler; 14] = [
        Handler::AlbRulePriorityGenerator,
        Handler::BacklogPerTaskCalculator,
        Handler::BucketCleaner,
        Handler::CertReplicator,
        Handler::CustomDomain,
        Handler::CustomDomainAppRunner,
        Handler::DesiredCountDelegation,
        Handler::DnsCertValidator,
        Handler::DnsDelegation,
        Handler::EnvController,
        Handler::TriggerStateMachine,
        Handler::UniqueJsonValues,
        Handler::WkldCertValidator,
        Handler::WkldCustomDomain,
    ];

    pub fn facts(self) -> HandlerFacts {
        let f = |file, creates_out_of_band, on_delete, destructive, terraform, blocked_feature| {
            HandlerFacts {
                file,
                creates_out_of_band,
                on_delete,
                destructive,
                terraform,
                blocked_feature,
            }
        };
        match self {
            Handler::AlbRulePriorityGenerator => f(
                "alb-rule-priority-generator.js",
                "nothing",
                "no-op",
                false,
                "a literal priority on aws_lb_listener_rule",
                None,
            ),
            Handler::BacklogPerTaskCalculator => f(
                "backlog-per-task-calculator.js",
                "the CloudWatch EMF metric BacklogPerTask",
                "none (a scheduled function, not a custom resource); removing it stops queue-based scaling",
                false,
                "aws_lambda_function + aws_cloudwatch_event_rule/_target + aws_lambda_permission",
                None,
            ),
            Handler::BucketCleaner => f(
                "bucket-cleaner.js",
                "nothing",
                "deletes every object version and delete marker in the ELB access-logs bucket",
                true,
                "none: aws_s3_bucket without force_destroy",
                None,
            ),
            Handler::CertReplicator => f(
                "cert-replicator.js",
                "an ACM certificate in us-east-1",
                "waits until unused, then DeleteCertificate in us-east-1",
                true,
                "aws_acm_certificate with a us-east-1 provider alias",
                Some("CDN (CloudFront)"),
            ),
            Handler::CustomDomain => f(
                "custom-domain.js",
                "Route 53 A-alias records for each alias, in the env, app or root zone",
                "DELETEs every alias A record",
                true,
                "aws_route53_record (A, alias)",
                None,
            ),
            Handler::CustomDomainAppRunner => f(
                "custom-domain-app-runner.js",
                "an App Runner custom-domain association, its CNAME and the ACM validation CNAMEs",
                "disassociates the domain, DELETEs the CNAME and the validation CNAMEs",
                true,
                "aws_apprunner_custom_domain_association + aws_route53_record (CNAME)",
                Some("Request-Driven Web Service (App Runner)"),
            ),
            Handler::DesiredCountDelegation => f(
                "desired-count-delegation.js",
                "nothing",
                "no-op",
                false,
                "aws_ecs_service.desired_count with ignore_changes",
                None,
            ),
            Handler::DnsCertValidator => f(
                "dns-cert-validator.js",
                "the ACM certificate env.app.domain (+ wildcard, aliases) and its validation CNAMEs",
                "waits until unused, DELETEs validation CNAMEs not used by a newer certificate, then DeleteCertificate",
                true,
                "aws_acm_certificate + aws_route53_record (validation)",
                None,
            ),
            Handler::DnsDelegation => f(
                "dns-delegation.js",
                "the NS record env.app.domain in the app hosted zone",
                "DELETEs the NS delegation record",
                true,
                "aws_route53_record (NS) in the app zone",
                None,
            ),
            Handler::EnvController => f(
                "env-controller.js",
                "nothing outside CloudFormation: it updates the env stack's parameters",
                "removes the workload from every *Workloads parameter and from Aliases, then UpdateStack on the env stack",
                true,
                "none: the env resources become static Terraform resources",
                None,
            ),
            Handler::TriggerStateMachine => f(
                "trigger-state-machine.js",
                "S3 objects (through the CopyAssetsStateMachine execution)",
                "no-op",
                false,
                "none: a CI `aws s3 sync`",
                Some("Static Site"),
            ),
            Handler::UniqueJsonValues => f(
                "unique-json-values.js",
                "nothing",
                "no-op",
                false,
                "a literal aliases list on aws_cloudfront_distribution",
                Some("CDN (CloudFront)"),
            ),
            Handler::WkldCertValidator => f(
                "wkld-cert-validator.js",
                "an ACM certificate tagged with app/env/svc and its validation CNAMEs",
                "DELETEs this service's unshared validation CNAMEs, waits until unused, DeleteCertificate",
                true,
                "aws_acm_certificate + aws_route53_record (validation)",
                Some("NLB or Static Site custom domain"),
            ),
            Handler::WkldCustomDomain => f(
                "wkld-custom-domain.js",
                "A-alias records for the aliases (to the NLB or CloudFront)",
                "DELETEs every alias A record that still points at this target",
                true,
                "aws_route53_record (A, alias)",
                Some("NLB or Static Site custom domain"),
            ),
        }
    }
}

/// Which handler backs a custom resource, by its type, the stack's kind and its properties.
/// `None`: not one of Copilot's (a custom resource of an addon, say).
pub fn classify(kind: Option<CopilotKind>, custom: &CustomResource) -> Option<Handler> {
    let has = |key: &str| custom.properties.get(key).is_some();
    let handler = custom.function.as_ref().and_then(|f| f.handler.as_deref());
    Some(match custom.resource_type.as_str() {
        "Custom::RulePriorityFunction" => Handler::AlbRulePriorityGenerator,
        "Custom::BucketCleanerFunction" => Handler::BucketCleaner,
        "Custom::CertificateReplicatorFunction" => Handler::CertReplicator,
        "Custom::DynamicDesiredCountFunction" => Handler::DesiredCountDelegation,
        "Custom::DNSDelegationFunction" => Handler::DnsDelegation,
        "Custom::EnvControllerFunction" => Handler::EnvController,
        "Custom::TriggerStateMachine" => Handler::TriggerStateMachine,
        "Custom::UniqueJSONValuesFunction" => Handler::UniqueJsonValues,
        "Custom::NLBCertValidatorFunction" => Handler::WkldCertValidator,
        "Custom::NLBCustomDomainFunction" => Handler::WkldCustomDomain,
        "Custom::CustomDomainFunction" => {
            if has("ServiceARN") || has("CustomDomain") {
                Handler::CustomDomainAppRunner
            } else if has("PublicAccessHostedZoneID") || has("ServiceName") {
                Handler::WkldCustomDomain
            } else if kind == Some(CopilotKind::Env) || has("PublicAccessHostedZone") {
                Handler::CustomDomain
            } else {
                return None;
            }
        }
        "Custom::CertificateValidationFunction" => {
            let env_like = kind == Some(CopilotKind::Env)
                || handler == Some("index.certificateRequestHandler")
                || has("EnvHostedZoneId");
            if has("IsCloudFrontCertificate") || handler == Some("index.handler") && !env_like {
                Handler::WkldCertValidator
            } else if env_like {
                Handler::DnsCertValidator
            } else {
                return None;
            }
        }
        _ => return None,
    })
}

/// The seed's scope for a whole stack, from the handlers it carries: the first blocked
/// feature found, if any.
pub fn blocked_feature(handlers: &[Handler]) -> Option<&'static str> {
    handlers.iter().find_map(|h| h.facts().blocked_feature)
}

/// What `!GetAtt <EnvControllerAction>.<Output>` of a workload stack is: the env-controller
/// answers with its environment stack's outputs (the seed: "return the new env Outputs"), so
/// the output of that name of the `<app>-<env>` stack as inventoried.
pub fn env_controller_output(
    inv: &crate::inventory::model::Inventory,
    stack: &crate::inventory::model::Stack,
    logical: &str,
    attribute: &str,
) -> Option<String> {
    let r = stack.resource(logical)?;
    if r.resource_type != "Custom::EnvControllerFunction" {
        return None;
    }
    let c = stack.copilot.as_ref()?;
    let env = inv.stack(&format!("{}-{}", c.app, c.env.as_deref()?))?;
    env.outputs
        .iter()
        .find(|o| o.key == attribute)
        .map(|o| o.value.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn env_controller_attributes_are_the_environment_stacks_outputs() {
        let inv: crate::inventory::model::Inventory = serde_json::from_value(json!({
            "format_version": 1, "account": "1", "region": "us-east-1", "taken_at": "t", "taken_by": "t",
            "selection": {"kind": "stacks", "names": []}, "content_sha256": "",
            "stacks": [
                {"name": "app-test", "id": "e", "status": "CREATE_COMPLETE", "template": "",
                 "outputs": [{"key": "InternalWorkloadsHostedZone", "value": "Z9"}]},
                {"name": "app-test-api", "id": "w", "status": "CREATE_COMPLETE", "template": "",
                 "copilot": {"kind": "workload", "app": "app", "env": "test", "workload": "api"},
                 "resources": [{"logical_id": "EnvControllerAction", "resource_type": "Custom::EnvControllerFunction",
                                "status": "CREATE_COMPLETE", "live": {"state": "not_read", "reason": "t"}}]}]}))
        .unwrap();
        let wl = &inv.stacks[1];
        let out = |attr: &str| env_controller_output(&inv, wl, "EnvControllerAction", attr);
        assert_eq!(out("InternalWorkloadsHostedZone").as_deref(), Some("Z9"));
        assert_eq!(out("Nope"), None);
        assert_eq!(
            env_controller_output(&inv, wl, "Other", "InternalWorkloadsHostedZone"),
            None
        );
    }

    fn custom(resource_type: &str, properties: serde_json::Value) -> CustomResource {
        CustomResource {
            logical_id: "X".into(),
            resource_type: resource_type.into(),
            physical_id: None,
            properties,
            service_token: String::new(),
            function: None,
        }
    }

    #[test]
    fn nine_of_the_thirteen_custom_resource_handlers_are_destructive() {
        let custom_resources = Handler::ALL
            .iter()
            .filter(|h| **h != Handler::BacklogPerTaskCalculator)
            .count();
        assert_eq!(custom_resources, 13);
        let destructive = Handler::ALL
            .iter()
            .filter(|h| h.facts().destructive)
            .count();
        assert_eq!(destructive, 9);
    }

    #[test]
    fn the_ambiguous_custom_domain_type_is_told_apart_by_stack_kind_and_properties() {
        let env = custom(
            "Custom::CustomDomainFunction",
            json!({"Aliases": {"Ref": "Aliases"}, "PublicAccessHostedZone": "Z1"}),
        );
        assert_eq!(
            classify(Some(CopilotKind::Env), &env),
            Some(Handler::CustomDomain)
        );
        let rdws = custom(
            "Custom::CustomDomainFunction",
            json!({"ServiceARN": "arn", "CustomDomain": "a.example.com"}),
        );
        assert_eq!(
            classify(Some(CopilotKind::Workload), &rdws),
            Some(Handler::CustomDomainAppRunner)
        );
        let site = custom(
            "Custom::CustomDomainFunction",
            json!({"PublicAccessHostedZoneID": "Z2FDTNDATAQYW2", "ServiceName": "site"}),
        );
        assert_eq!(
            classify(Some(CopilotKind::Workload), &site),
            Some(Handler::WkldCustomDomain)
        );
    }

    #[test]
    fn the_ambiguous_certificate_type_is_told_apart_too() {
        let env = custom(
            "Custom::CertificateValidationFunction",
            json!({"EnvHostedZoneId": {"Ref": "EnvironmentHostedZone"}}),
        );
        assert_eq!(
            classify(Some(CopilotKind::Env), &env),
            Some(Handler::DnsCertValidator)
        );
        let site = custom(
            "Custom::CertificateValidationFunction",
            json!({"IsCloudFrontCertificate": true}),
        );
        assert_eq!(
            classify(Some(CopilotKind::Workload), &site),
            Some(Handler::WkldCertValidator)
        );
        assert_eq!(classify(None, &custom("Custom::Mine", json!({}))), None);
    }

    #[test]
    fn blocked_scopes_follow_the_seed() {
        assert_eq!(
            blocked_feature(&[Handler::EnvController, Handler::AlbRulePriorityGenerator]),
            None
        );
        assert_eq!(
            blocked_feature(&[Handler::CustomDomain, Handler::CertReplicator]),
            Some("CDN (CloudFront)")
        );
    }
}
