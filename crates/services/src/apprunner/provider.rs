//! CloudFormation providers of App Runner's types (filled in below).

use crate::providers::ProviderServices;
use cumulo_engine::ProviderRegistry;

pub fn register(_r: &mut ProviderRegistry, _s: &ProviderServices) {}
