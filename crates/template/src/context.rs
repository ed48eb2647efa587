//! What evaluation needs from the world: pseudo parameters and a [`Resolver`] for values only a
//! deployment knows (resource Refs and attributes, other stacks' exports, availability zones).
//! The engine implements the resolver over live stack state; `render` over placeholders.

use crate::Diagnostic;
use crate::value::Value;

/// The pseudo parameters of one stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pseudo {
    pub region: String,
    pub account_id: String,
    pub stack_name: String,
    pub stack_id: String,
    pub notification_arns: Vec<String>,
}

impl Pseudo {
    /// Pseudo parameters for a stack; the stack id follows AWS's ARN form.
    pub fn new(region: &str, account_id: &str, stack_name: &str, stack_uuid: &str) -> Pseudo {
        let partition = partition_of(region);
        Pseudo {
            region: region.to_string(),
            account_id: account_id.to_string(),
            stack_name: stack_name.to_string(),
            stack_id: format!(
                "arn:{partition}:cloudformation:{region}:{account_id}:stack/{stack_name}/{stack_uuid}"
            ),
            notification_arns: Vec::new(),
        }
    }

    pub fn partition(&self) -> &'static str {
        partition_of(&self.region)
    }

    pub fn url_suffix(&self) -> &'static str {
        match self.partition() {
            "aws-cn" => "amazonaws.com.cn",
            "aws-iso" => "c2s.ic.gov",
            "aws-iso-b" => "sc2s.sgov.gov",
            _ => "amazonaws.com",
        }
    }

    /// The string-valued pseudo parameters, borrowed: Fn::Sub copies them straight into its
    /// result (every resource name in a typical template is a `${AWS::StackName}-...`).
    pub fn get_str(&self, name: &str) -> Option<&str> {
        match name {
            "AWS::Region" => Some(&self.region),
            "AWS::AccountId" => Some(&self.account_id),
            "AWS::StackName" => Some(&self.stack_name),
            "AWS::StackId" => Some(&self.stack_id),
            "AWS::Partition" => Some(self.partition()),
            "AWS::URLSuffix" => Some(self.url_suffix()),
            _ => None,
        }
    }

    /// The value of `Ref: AWS::<name>`; `None` for names that are not pseudo parameters.
    /// `AWS::NoValue` is handled by the evaluator (it removes, rather than yields, a value).
    pub fn get(&self, name: &str) -> Option<Value> {
        if let Some(s) = self.get_str(name) {
            return Some(Value::from(s));
        }
        match name {
            "AWS::NotificationARNs" => Some(Value::Array(
                self.notification_arns
                    .iter()
                    .cloned()
                    .map(Value::from)
                    .collect(),
            )),
            _ => None,
        }
    }
}

/// The partition a region belongs to.
pub fn partition_of(region: &str) -> &'static str {
    if region.starts_with("cn-") {
        "aws-cn"
    } else if region.starts_with("us-gov-") {
        "aws-us-gov"
    } else if region.starts_with("us-isob-") {
        "aws-iso-b"
    } else if region.starts_with("us-iso-") {
        "aws-iso"
    } else {
        "aws"
    }
}

/// Names `Ref` accepts as pseudo parameters (including NoValue).
pub fn is_pseudo(name: &str) -> bool {
    matches!(
        name,
        "AWS::Region"
            | "AWS::AccountId"
            | "AWS::StackName"
            | "AWS::StackId"
            | "AWS::Partition"
            | "AWS::URLSuffix"
            | "AWS::NotificationARNs"
            | "AWS::NoValue"
    )
}

/// Values only a deployment knows. Each method is called for a resource the template defines
/// and whose condition holds; the evaluator has already reported references to anything else.
pub trait Resolver {
    /// `Ref` to a resource: its physical id (or whatever its type's Ref returns).
    fn resource_ref(&self, logical_id: &str) -> Result<Value, Diagnostic>;
    /// `Fn::GetAtt`. `attribute` may contain dots (`Outputs.Name`, `Endpoint.Address`).
    fn get_att(&self, logical_id: &str, attribute: &str) -> Result<Value, Diagnostic>;
    /// `Fn::ImportValue`: another stack's export in this region.
    fn import_value(&self, export_name: &str) -> Result<Value, Diagnostic>;
    /// `Fn::GetAZs`: the availability zones of `region`.
    fn availability_zones(&self, region: &str) -> Vec<String> {
        ["a", "b", "c"]
            .iter()
            .map(|z| [region, z].concat())
            .collect()
    }
}

/// Placeholder prefix for values that need a deployed resource: see [`PlaceholderResolver`].
pub const PLACEHOLDER_PREFIX: &str = "{{cumulo:";

/// Stands in for a deployment: `Ref` to a resource renders as `{{cumulo:Ref:Id}}`, `Fn::GetAtt`
/// as `{{cumulo:GetAtt:Id.Attr}}`, `Fn::ImportValue` as `{{cumulo:ImportValue:Name}}`. The
/// `{{...}}` form cannot be mistaken for a real value and is close to CloudFormation's own
/// `{{resolve:...}}` syntax, so it reads naturally in rendered output.
pub struct PlaceholderResolver;

impl Resolver for PlaceholderResolver {
    fn resource_ref(&self, logical_id: &str) -> Result<Value, Diagnostic> {
        Ok(placeholder(&["Ref:", logical_id]))
    }

    fn get_att(&self, logical_id: &str, attribute: &str) -> Result<Value, Diagnostic> {
        Ok(placeholder(&["GetAtt:", logical_id, ".", attribute]))
    }

    fn import_value(&self, export_name: &str) -> Result<Value, Diagnostic> {
        Ok(placeholder(&["ImportValue:", export_name]))
    }
}

/// `{{cumulo:<parts>}}`, concatenated into one allocation of the right size (rendering makes
/// one per resource reference, and `format!` cost several times the copy).
fn placeholder(parts: &[&str]) -> Value {
    let len = PLACEHOLDER_PREFIX.len() + parts.iter().map(|p| p.len()).sum::<usize>() + 2;
    let mut s = String::with_capacity(len);
    s.push_str(PLACEHOLDER_PREFIX);
    for part in parts {
        s.push_str(part);
    }
    s.push_str("}}");
    Value::String(s.into())
}

/// Whether a string is a placeholder standing for a not-yet-known value (possibly a list).
pub fn is_placeholder(s: &str) -> bool {
    s.starts_with(PLACEHOLDER_PREFIX) && s.ends_with("}}")
}
