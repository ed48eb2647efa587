//! Decoding `Content-Encoding: aws-chunked` request bodies.
//!
//! SDKs that stream uploads frame the payload in chunks instead of sending it raw:
//! `STREAMING-AWS4-HMAC-SHA256-PAYLOAD` (each chunk carries `;chunk-signature=...`),
//! `STREAMING-UNSIGNED-PAYLOAD-TRAILER` (bare chunks, then checksum trailers such as
//! `x-amz-checksum-crc32:...`), and the signed variant with trailers. All share one grammar:
//!
//! ```text
//! hex-size[;ext...]\r\n data \r\n ... 0[;ext...]\r\n (trailer-name:value\r\n)* \r\n
//! ```
//!
//! Chunk signatures are not verified here (signature checking belongs to the gateway); the
//! decoder only recovers the payload and the trailers, and rejects malformed framing so a broken
//! upload is never stored as if it were whole.

/// Why an aws-chunked body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkedError {
    #[error("aws-chunked body ended before the final chunk")]
    Truncated,
    #[error("aws-chunked chunk size is not valid hex: {0:?}")]
    BadSize(String),
    #[error("aws-chunked chunk data is not followed by CRLF")]
    MissingCrlf,
    #[error("aws-chunked trailer line is not `name:value`: {0:?}")]
    BadTrailer(String),
}

/// A decoded aws-chunked body: the payload and the trailing headers (names lowercased).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decoded {
    pub payload: Vec<u8>,
    pub trailers: Vec<(String, String)>,
}

impl Decoded {
    /// A trailer's value by (lowercase) name.
    pub fn trailer(&self, name: &str) -> Option<&str> {
        self.trailers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Whether a request with these `Content-Encoding` / `x-amz-content-sha256` values carries an
/// aws-chunked body.
pub fn is_aws_chunked(content_encoding: Option<&str>, content_sha256: Option<&str>) -> bool {
    let by_encoding = content_encoding.is_some_and(|ce| {
        ce.split(',')
            .any(|p| p.trim().eq_ignore_ascii_case("aws-chunked"))
    });
    let by_sha = content_sha256.is_some_and(|s| s.starts_with("STREAMING-"));
    by_encoding || by_sha
}

/// The `Content-Encoding` to store once `aws-chunked` is removed (`None` if nothing remains).
pub fn strip_aws_chunked(content_encoding: &str) -> Option<String> {
    let rest: Vec<&str> = content_encoding
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty() && !p.eq_ignore_ascii_case("aws-chunked"))
        .collect();
    if rest.is_empty() {
        None
    } else {
        Some(rest.join(","))
    }
}

/// Decodes a whole aws-chunked body. `size_hint` (from `x-amz-decoded-content-length`) only
/// pre-sizes the buffer.
pub fn decode(body: &[u8], size_hint: Option<usize>) -> Result<Decoded, ChunkedError> {
    // Never trust the hint beyond what the body could hold.
    let mut payload = Vec::with_capacity(size_hint.unwrap_or(0).min(body.len()));
    let mut pos = 0;
    loop {
        let line = read_line(body, &mut pos)?;
        let size_text = line.split(|b| *b == b';').next().unwrap_or(&[]);
        let size_text = std::str::from_utf8(size_text)
            .map_err(|_| ChunkedError::BadSize(String::from_utf8_lossy(line).into_owned()))?
            .trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| ChunkedError::BadSize(size_text.to_string()))?;
        if size == 0 {
            break;
        }
        let end = pos.checked_add(size).ok_or(ChunkedError::Truncated)?;
        let data = body.get(pos..end).ok_or(ChunkedError::Truncated)?;
        payload.extend_from_slice(data);
        pos = end;
        if body.get(pos..pos + 2) != Some(b"\r\n") {
            return Err(if body.len() < pos + 2 {
                ChunkedError::Truncated
            } else {
                ChunkedError::MissingCrlf
            });
        }
        pos += 2;
    }
    let mut trailers = Vec::new();
    // Trailers until an empty line; a body that simply ends after the last chunk is accepted too
    // (some clients omit the final CRLF when there are no trailers).
    while pos < body.len() {
        let line = read_line(body, &mut pos)?;
        if line.is_empty() {
            break;
        }
        let text = String::from_utf8_lossy(line);
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| ChunkedError::BadTrailer(text.to_string()))?;
        trailers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    Ok(Decoded { payload, trailers })
}

/// The bytes up to the next CRLF (or lone LF), advancing past it.
fn read_line<'a>(body: &'a [u8], pos: &mut usize) -> Result<&'a [u8], ChunkedError> {
    let rest = body.get(*pos..).ok_or(ChunkedError::Truncated)?;
    let nl = rest
        .iter()
        .position(|b| *b == b'\n')
        .ok_or(ChunkedError::Truncated)?;
    *pos += nl + 1;
    let line = &rest[..nl];
    Ok(line.strip_suffix(b"\r").unwrap_or(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_signed_chunks() {
        let sig =
            "chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648";
        let body = format!("5;{sig}\r\nhello\r\n6;{sig}\r\n world\r\n0;{sig}\r\n\r\n");
        let d = decode(body.as_bytes(), Some(11)).unwrap();
        assert_eq!(d.payload, b"hello world");
        assert!(d.trailers.is_empty());
    }

    #[test]
    fn decodes_unsigned_trailer() {
        let body = b"a\r\n0123456789\r\n3\r\nabc\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n";
        let d = decode(body, None).unwrap();
        assert_eq!(d.payload, b"0123456789abc");
        assert_eq!(d.trailer("x-amz-checksum-crc32"), Some("AAAAAA=="));
    }

    #[test]
    fn decodes_signed_trailer_and_binary_data() {
        let mut body = b"4;chunk-signature=x\r\n".to_vec();
        body.extend_from_slice(&[0, 13, 10, 255]);
        body.extend_from_slice(b"\r\n0;chunk-signature=y\r\nX-Amz-Checksum-Sha256:abc=\r\nx-amz-trailer-signature:z\r\n\r\n");
        let d = decode(&body, Some(4)).unwrap();
        assert_eq!(d.payload, vec![0, 13, 10, 255]);
        assert_eq!(d.trailer("x-amz-checksum-sha256"), Some("abc="));
        assert_eq!(d.trailer("x-amz-trailer-signature"), Some("z"));
    }

    #[test]
    fn empty_payload() {
        let d = decode(b"0\r\n\r\n", Some(0)).unwrap();
        assert!(d.payload.is_empty());
    }

    #[test]
    fn rejects_malformed_bodies() {
        assert_eq!(decode(b"", None), Err(ChunkedError::Truncated));
        assert_eq!(
            decode(b"zz\r\nab\r\n0\r\n\r\n", None),
            Err(ChunkedError::BadSize("zz".into()))
        );
        assert_eq!(decode(b"5\r\nab", None), Err(ChunkedError::Truncated));
        assert_eq!(
            decode(b"2\r\nabcd\r\n0\r\n\r\n", None),
            Err(ChunkedError::MissingCrlf)
        );
        assert_eq!(
            decode(b"ffffffffffffffff\r\nab", None),
            Err(ChunkedError::Truncated)
        );
        assert!(matches!(
            decode(b"0\r\nnocolon\r\n\r\n", None),
            Err(ChunkedError::BadTrailer(_))
        ));
        // A size far larger than the body must fail cleanly, not allocate or panic.
        assert_eq!(
            decode(b"fffffff\r\nab\r\n", Some(usize::MAX)),
            Err(ChunkedError::Truncated)
        );
    }

    #[test]
    fn detects_and_strips_encoding() {
        assert!(is_aws_chunked(Some("aws-chunked"), None));
        assert!(is_aws_chunked(Some("gzip, aws-chunked"), None));
        assert!(is_aws_chunked(
            None,
            Some("STREAMING-UNSIGNED-PAYLOAD-TRAILER")
        ));
        assert!(!is_aws_chunked(Some("gzip"), Some("UNSIGNED-PAYLOAD")));
        assert_eq!(strip_aws_chunked("aws-chunked"), None);
        assert_eq!(strip_aws_chunked("aws-chunked,gzip"), Some("gzip".into()));
    }
}
