//! IPv4 CIDR blocks: what VPC and subnet checks need (parse, contain, overlap, addresses).

use std::net::Ipv4Addr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub base: u32,
    pub prefix: u8,
}

impl Block {
    /// `a.b.c.d/n` with host bits clear; anything else is `None`.
    pub fn parse(text: &str) -> Option<Block> {
        let (addr, len) = text.split_once('/')?;
        let addr: Ipv4Addr = addr.parse().ok()?;
        let prefix: u8 = len.parse().ok().filter(|p| *p <= 32)?;
        let base = u32::from(addr);
        (base & !mask(prefix) == 0).then_some(Block { base, prefix })
    }

    pub fn size(&self) -> u64 {
        1u64 << (32 - u32::from(self.prefix))
    }

    fn last(&self) -> u32 {
        self.base | !mask(self.prefix)
    }

    pub fn contains_block(&self, inner: &Block) -> bool {
        inner.prefix >= self.prefix && inner.base & mask(self.prefix) == self.base
    }

    pub fn overlaps(&self, other: &Block) -> bool {
        self.base <= other.last() && other.base <= self.last()
    }

    /// The `n`th address of the block.
    pub fn address(&self, n: u32) -> String {
        Ipv4Addr::from(self.base.wrapping_add(n)).to_string()
    }
}

fn mask(prefix: u8) -> u32 {
    if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks() {
        let vpc = Block::parse("10.0.0.0/16").unwrap();
        let a = Block::parse("10.0.1.0/24").unwrap();
        let b = Block::parse("10.0.1.128/25").unwrap();
        let out = Block::parse("10.1.0.0/24").unwrap();
        assert!(vpc.contains_block(&a) && vpc.contains_block(&b) && !vpc.contains_block(&out));
        assert!(a.overlaps(&b) && !a.overlaps(&out));
        assert_eq!(a.size(), 256);
        assert_eq!(a.address(4), "10.0.1.4");
        for bad in [
            "10.0.0.1/16",
            "10.0.0.0",
            "10.0.0.0/33",
            "300.0.0.0/8",
            "x/8",
        ] {
            assert_eq!(Block::parse(bad), None, "{bad}");
        }
    }
}
