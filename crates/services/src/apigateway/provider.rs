//! CloudFormation providers of AWS::ApiGateway::* and AWS::ApiGatewayV2::*.

use crate::providers::ProviderServices;
use cumulo_engine::ProviderRegistry;

pub fn register(_r: &mut ProviderRegistry, _s: &ProviderServices) {}
