//! CloudFormation providers for Route 53 (none registered yet).

use crate::providers::ProviderServices;
use cumulo_engine::ProviderRegistry;

pub fn register(_r: &mut ProviderRegistry, _s: &ProviderServices) {}
