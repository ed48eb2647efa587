//! DynamoDB's Number: a decimal of up to 38 significant digits with a magnitude between 1E-130
//! and 9.9999999999999999999999999999999999999E+125 (or zero). No decimal crate covers that
//! range exactly (`rust_decimal` stops at 28 digits and 1E28), so this is a small exact decimal:
//! a digit string and an exponent, which is all DynamoDB needs — parse, normalize, order, add.
//!
//! Invariant: `digits` has no leading or trailing zeros (empty means zero, which is never
//! negative), and the value is `0.d1d2d3... × 10^exp`.

use std::cmp::Ordering;

/// Largest number of significant digits DynamoDB stores.
const MAX_DIGITS: usize = 38;
/// `exp` bounds in the `0.D × 10^exp` form: 9.99…E+125 has exp 126, 1E-130 has exp -129.
const MAX_EXP: i32 = 126;
const MIN_EXP: i32 = -129;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Number {
    neg: bool,
    digits: Vec<u8>,
    exp: i32,
}

/// Why a text is not a DynamoDB number; the `Display` is DynamoDB's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NumberError {
    #[error("A value provided cannot be converted into a number")]
    Invalid,
    #[error("Attempting to store more than 38 significant digits in a Number")]
    Precision,
    #[error(
        "Number overflow. Attempting to store a number with magnitude larger than supported range"
    )]
    Overflow,
    #[error(
        "Number underflow. Attempting to store a number with magnitude smaller than supported range"
    )]
    Underflow,
}

impl Number {
    pub fn zero() -> Number {
        Number {
            neg: false,
            digits: Vec::new(),
            exp: 0,
        }
    }

    /// Parses DynamoDB's number text (`-12.50`, `1e3`, `.5`), normalized and range-checked.
    pub fn parse(text: &str) -> Result<Number, NumberError> {
        let b = text.as_bytes();
        let mut i = 0;
        let mut neg = false;
        if let Some(&c) = b.first()
            && (c == b'-' || c == b'+')
        {
            neg = c == b'-';
            i = 1;
        }
        let mut mantissa: Vec<u8> = Vec::new();
        let mut point: Option<usize> = None;
        let mut seen_digit = false;
        while i < b.len() {
            match b[i] {
                c @ b'0'..=b'9' => {
                    mantissa.push(c - b'0');
                    seen_digit = true;
                }
                b'.' if point.is_none() => point = Some(mantissa.len()),
                b'e' | b'E' => break,
                _ => return Err(NumberError::Invalid),
            }
            i += 1;
        }
        if !seen_digit {
            return Err(NumberError::Invalid);
        }
        let mut e10: i64 = 0;
        if i < b.len() {
            let rest = &text[i + 1..];
            if rest.is_empty() || rest == "-" || rest == "+" {
                return Err(NumberError::Invalid);
            }
            let digits = rest.strip_prefix(['+', '-']).unwrap_or(rest);
            if !digits.bytes().all(|c| c.is_ascii_digit()) {
                return Err(NumberError::Invalid);
            }
            // Any exponent beyond a few thousand is out of range whatever the mantissa.
            e10 = rest.parse::<i64>().unwrap_or(if rest.starts_with('-') {
                -100_000
            } else {
                100_000
            });
            e10 = e10.clamp(-100_000, 100_000);
        }
        let int_len = point.unwrap_or(mantissa.len()) as i64;
        Self::from_parts(neg, mantissa, int_len + e10)
    }

    /// Builds `±0.D × 10^exp` from raw digits (leading/trailing zeros allowed) and checks range.
    fn from_parts(neg: bool, mut digits: Vec<u8>, mut exp: i64) -> Result<Number, NumberError> {
        let lead = digits.iter().take_while(|d| **d == 0).count();
        digits.drain(..lead);
        exp -= lead as i64;
        while digits.last() == Some(&0) {
            digits.pop();
        }
        if digits.is_empty() {
            return Ok(Number::zero());
        }
        if digits.len() > MAX_DIGITS {
            return Err(NumberError::Precision);
        }
        if exp > MAX_EXP as i64 {
            return Err(NumberError::Overflow);
        }
        if exp < MIN_EXP as i64 {
            return Err(NumberError::Underflow);
        }
        Ok(Number {
            neg,
            digits,
            exp: exp as i32,
        })
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Significant digits, for DynamoDB's item-size arithmetic.
    pub fn significant_digits(&self) -> usize {
        self.digits.len()
    }

    pub fn negate(&self) -> Number {
        Number {
            neg: !self.neg && !self.is_zero(),
            ..self.clone()
        }
    }

    /// Exact sum, refused as DynamoDB refuses a result it cannot store.
    pub fn add(&self, other: &Number) -> Result<Number, NumberError> {
        if self.is_zero() {
            return Ok(other.clone());
        }
        if other.is_zero() {
            return Ok(self.clone());
        }
        // Both as integers scaled to the lowest digit position of either.
        let low = |n: &Number| n.exp as i64 - n.digits.len() as i64;
        let lo = low(self).min(low(other));
        let scaled = |n: &Number| {
            let mut d = n.digits.clone();
            d.resize(d.len() + (low(n) - lo) as usize, 0);
            d
        };
        let (a, b) = (scaled(self), scaled(other));
        let (neg, digits) = if self.neg == other.neg {
            (self.neg, add_mag(&a, &b))
        } else {
            match cmp_mag(&a, &b) {
                Ordering::Equal => return Ok(Number::zero()),
                Ordering::Greater => (self.neg, sub_mag(&a, &b)),
                Ordering::Less => (other.neg, sub_mag(&b, &a)),
            }
        };
        let exp = lo + digits.len() as i64;
        Self::from_parts(neg, digits, exp)
    }

    pub fn sub(&self, other: &Number) -> Result<Number, NumberError> {
        self.add(&other.negate())
    }

    /// The value as an `i64` when it is an integer that fits (list indexes, TTL epochs).
    pub fn to_i64(&self) -> Option<i64> {
        if self.is_zero() {
            return Some(0);
        }
        if self.exp < self.digits.len() as i32 || self.exp > 18 {
            return None;
        }
        let mut v: i64 = 0;
        for i in 0..self.exp as usize {
            v = v * 10 + *self.digits.get(i).unwrap_or(&0) as i64;
        }
        Some(if self.neg { -v } else { v })
    }
}

fn cmp_mag(a: &[u8], b: &[u8]) -> Ordering {
    let a = &a[a.iter().take_while(|d| **d == 0).count()..];
    let b = &b[b.iter().take_while(|d| **d == 0).count()..];
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn add_mag(a: &[u8], b: &[u8]) -> Vec<u8> {
    let n = a.len().max(b.len());
    let mut out = vec![0u8; n + 1];
    let mut carry = 0u8;
    for i in 0..n {
        let x = if i < a.len() { a[a.len() - 1 - i] } else { 0 };
        let y = if i < b.len() { b[b.len() - 1 - i] } else { 0 };
        let s = x + y + carry;
        out[n - i] = s % 10;
        carry = s / 10;
    }
    out[0] = carry;
    out
}

/// `a - b` for `a >= b`.
fn sub_mag(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; a.len()];
    let mut borrow = 0i8;
    for i in 0..a.len() {
        let x = a[a.len() - 1 - i] as i8;
        let y = if i < b.len() {
            b[b.len() - 1 - i] as i8
        } else {
            0
        };
        let mut d = x - y - borrow;
        borrow = 0;
        if d < 0 {
            d += 10;
            borrow = 1;
        }
        out[a.len() - 1 - i] = d as u8;
    }
    out
}

impl Ord for Number {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => {
                return if other.neg {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
            }
            (false, true) => {
                return if self.neg {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
            }
            _ => {}
        }
        match (self.neg, other.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (neg, _) => {
                let mag = self
                    .exp
                    .cmp(&other.exp)
                    .then_with(|| self.digits.cmp(&other.digits));
                if neg { mag.reverse() } else { mag }
            }
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Plain notation, as DynamoDB returns numbers: `100`, `0.015`, `-3.5`.
impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let mut s = String::with_capacity(self.digits.len() + 8);
        if self.neg {
            s.push('-');
        }
        let digit = |d: &u8| char::from(b'0' + d);
        let len = self.digits.len() as i32;
        if self.exp <= 0 {
            s.push_str("0.");
            s.extend(std::iter::repeat_n('0', (-self.exp) as usize));
            s.extend(self.digits.iter().map(digit));
        } else if self.exp >= len {
            s.extend(self.digits.iter().map(digit));
            s.extend(std::iter::repeat_n('0', (self.exp - len) as usize));
        } else {
            let (int, frac) = self.digits.split_at(self.exp as usize);
            s.extend(int.iter().map(digit));
            s.push('.');
            s.extend(frac.iter().map(digit));
        }
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Number {
        Number::parse(s).expect(s)
    }

    #[test]
    fn normalizes_and_prints_plain() {
        assert_eq!(n("1.50").to_string(), "1.5");
        assert_eq!(n("001e2").to_string(), "100");
        assert_eq!(n("-0.0").to_string(), "0");
        assert_eq!(n(".015").to_string(), "0.015");
        assert_eq!(n("-12.5E-3").to_string(), "-0.0125");
        assert_eq!(n("1E+125").to_string().len(), 126);
    }

    #[test]
    fn range_and_precision() {
        assert_eq!(Number::parse("abc"), Err(NumberError::Invalid));
        assert_eq!(Number::parse("1e"), Err(NumberError::Invalid));
        assert_eq!(Number::parse(""), Err(NumberError::Invalid));
        assert_eq!(Number::parse("1E126"), Err(NumberError::Overflow));
        assert_eq!(Number::parse("1E-131"), Err(NumberError::Underflow));
        assert!(Number::parse("1E-130").is_ok());
        assert!(Number::parse("9.9999999999999999999999999999999999999E+125").is_ok());
        assert_eq!(
            Number::parse("1.23456789012345678901234567890123456789"),
            Err(NumberError::Precision)
        );
        assert!(Number::parse("12345678901234567890123456789012345678000").is_ok());
    }

    #[test]
    fn orders_numerically() {
        let mut v = [
            n("10"),
            n("-2"),
            n("0"),
            n("2.5"),
            n("-10"),
            n("1e-5"),
            n("9"),
        ];
        v.sort();
        let s: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(s, ["-10", "-2", "0", "0.00001", "2.5", "9", "10"]);
    }

    #[test]
    fn adds_exactly() {
        assert_eq!(n("0.1").add(&n("0.2")).unwrap().to_string(), "0.3");
        assert_eq!(n("5").sub(&n("7.25")).unwrap().to_string(), "-2.25");
        assert_eq!(n("999").add(&n("1")).unwrap().to_string(), "1000");
        assert_eq!(n("-3").add(&n("3")).unwrap().to_string(), "0");
        assert_eq!(
            n("1e30").add(&n("1e-30")),
            Err(NumberError::Precision),
            "61 significant digits cannot be stored"
        );
        assert_eq!(n("42").to_i64(), Some(42));
        assert_eq!(n("4.2").to_i64(), None);
    }
}
