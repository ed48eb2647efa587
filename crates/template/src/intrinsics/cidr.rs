//! Fn::Cidr: `count` consecutive subnets of `cidrBits` host bits carved from the start of
//! `ipBlock` (its network address; host bits in the block are ignored), IPv4 or IPv6.

use super::Evaluator;
use crate::Diagnostic;
use crate::context::{PLACEHOLDER_PREFIX, is_placeholder};
use crate::errors;
use crate::value::Value;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

impl Evaluator<'_> {
    pub(super) fn cidr(&self, arg: &Value) -> Result<Value, Diagnostic> {
        let Some([block, count, bits]) = arg.as_array().map(Vec::as_slice) else {
            return Err(errors::malformed("Fn::Cidr"));
        };
        let block = self.eval_string(block, "Fn::Cidr")?;
        let count = self.eval_string(count, "Fn::Cidr")?;
        let bits = self.eval_string(bits, "Fn::Cidr")?;
        // Over a value only a deployment knows, the result is a (list) placeholder too.
        if [&block, &count, &bits].iter().any(|a| is_placeholder(a)) {
            return Ok(Value::from(format!(
                "{PLACEHOLDER_PREFIX}Cidr:{block}:{count}:{bits}}}}}"
            )));
        }
        let subnets = cidr(&block, &count, &bits)?;
        Ok(Value::Array(subnets.into_iter().map(Value::from).collect()))
    }
}

/// The subnets Fn::Cidr returns, from its three arguments as text.
pub fn cidr(block: &str, count: &str, cidr_bits: &str) -> Result<Vec<String>, Diagnostic> {
    let invalid_block = || {
        errors::template_error(format!(
            "Fn::Cidr ipBlock {block} is not a valid CIDR block"
        ))
    };
    let bad_numbers = || {
        errors::template_error(
            "Fn::Cidr count must be between 1 and 256 and cidrBits must be an integer",
        )
    };
    let (addr, prefix) = block.split_once('/').ok_or_else(invalid_block)?;
    let addr: IpAddr = addr.parse().map_err(|_| invalid_block())?;
    let prefix: u32 = prefix.parse().map_err(|_| invalid_block())?;
    let count: u32 = count.trim().parse().map_err(|_| bad_numbers())?;
    let bits: u32 = cidr_bits.trim().parse().map_err(|_| bad_numbers())?;
    if !(1..=256).contains(&count) {
        return Err(bad_numbers());
    }
    let (width, base) = match addr {
        IpAddr::V4(a) => (32u32, u128::from(u32::from(a))),
        IpAddr::V6(a) => (128u32, u128::from(a)),
    };
    if prefix > width {
        return Err(invalid_block());
    }
    if bits > width {
        return Err(bad_numbers());
    }
    let new_prefix = width - bits;
    let too_many = || {
        errors::template_error(format!(
            "Fn::Cidr cannot fit {count} blocks with {bits} CIDR bits in {block}"
        ))
    };
    if new_prefix < prefix {
        return Err(too_many());
    }
    // How many subnets of the new size the block holds: 2^(new_prefix - prefix), capped so the
    // shift cannot overflow (any count ≤ 256 fits once the exponent reaches 9).
    let available = 1u128 << (new_prefix - prefix).min(9);
    if u128::from(count) > available {
        return Err(too_many());
    }
    let mask = if prefix == 0 {
        0
    } else {
        (u128::MAX << (128 - prefix)) >> (128 - width)
    };
    let network = base & mask;
    // bits may be 128 (a single /0 subnet): a step that does not fit is never multiplied by > 0.
    let step = 1u128.checked_shl(bits).unwrap_or(0);
    Ok((0..u128::from(count))
        .map(|i| {
            let start = network + i * step;
            match addr {
                IpAddr::V4(_) => {
                    let a = Ipv4Addr::from(u32::try_from(start).unwrap_or(u32::MAX));
                    format!("{a}/{new_prefix}")
                }
                IpAddr::V6(_) => format!("{}/{new_prefix}", Ipv6Addr::from(start)),
            }
        })
        .collect())
}
