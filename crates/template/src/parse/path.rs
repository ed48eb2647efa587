//! The path of the node being parsed, built in one reusable buffer, with its hash kept as it
//! grows so that locating a node costs no allocation and no rehash of the whole path.

/// FNV-1a offset basis: the hash of the empty path (the root).
pub(super) const ROOT_HASH: u64 = 0xcbf2_9ce4_8422_2325;

/// Extends a path hash by `bytes`. FNV-1a is a streaming hash, so hashing `a/b` in pieces gives
/// the same value as hashing it whole, which [`SourceMap::position`](super::SourceMap) relies on
/// to hash a queried path and all its ancestors in one pass.
pub(super) fn extend_hash(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Where to [`NodePath::truncate`] back to after a child.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mark {
    len: usize,
    hash: u64,
}

/// `Resources/Bucket/Properties`-style path; segments are pushed on the way down and truncated on
/// the way up.
///
/// An untracked path ([`NodePath::untracked`]) stays empty: parsing a template that turns out
/// well formed needs no paths at all, and building them for every node was a large part of the
/// parse.
#[derive(Debug)]
pub(super) struct NodePath {
    buf: String,
    hash: u64,
    tracked: bool,
}

impl Default for NodePath {
    fn default() -> Self {
        NodePath {
            buf: String::new(),
            hash: ROOT_HASH,
            tracked: true,
        }
    }
}

impl NodePath {
    /// A path that records nothing.
    pub(super) fn untracked() -> Self {
        NodePath {
            tracked: false,
            ..NodePath::default()
        }
    }

    /// Whether segments are recorded (and so nodes should be located).
    pub(super) fn is_tracked(&self) -> bool {
        self.tracked
    }

    fn mark(&self) -> Mark {
        Mark {
            len: self.buf.len(),
            hash: self.hash,
        }
    }

    fn separator(&mut self) -> Mark {
        let mark = self.mark();
        if !self.buf.is_empty() {
            self.buf.push('/');
            self.hash = extend_hash(self.hash, b"/");
        }
        mark
    }

    /// Appends a segment.
    pub(super) fn push(&mut self, segment: &str) -> Mark {
        if !self.tracked {
            return self.mark();
        }
        let mark = self.separator();
        self.buf.push_str(segment);
        self.hash = extend_hash(self.hash, segment.as_bytes());
        mark
    }

    /// Appends a sequence index.
    pub(super) fn push_index(&mut self, index: usize) -> Mark {
        use std::fmt::Write;
        if !self.tracked {
            return self.mark();
        }
        let mark = self.separator();
        let start = self.buf.len();
        // Writing to a String cannot fail.
        let _ = write!(self.buf, "{index}");
        self.hash = extend_hash(self.hash, &self.buf.as_bytes()[start..]);
        mark
    }

    pub(super) fn truncate(&mut self, mark: Mark) {
        self.buf.truncate(mark.len);
        self.hash = mark.hash;
    }

    pub(super) fn as_str(&self) -> &str {
        &self.buf
    }

    pub(super) fn hash(&self) -> u64 {
        self.hash
    }
}
