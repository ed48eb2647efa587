//! CloudFormation providers of the Step Functions types.

use crate::providers::ProviderServices;
use cumulo_engine::ProviderRegistry;

pub fn register(_r: &mut ProviderRegistry, _s: &ProviderServices) {}
