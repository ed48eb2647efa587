//! JSONata's number pictures: `$formatNumber` (XPath `format-number`: `#,##0.00`, a negative
//! sub-picture after `;`, percent and per-mille, the decimal and grouping separators as
//! options), `$formatInteger` and `$parseInteger` (XPath `format-integer`: `0001`, `#,##0`,
//! roman numerals `I`/`i`, letters `a`/`A`, numbers in words `w`/`W`/`Ww`, ordinals
//! `;o`), exponents (`00.000e0`).

use super::jsonata_time::{ordinal_suffix, roman};
use super::jsonata_words::{cased, from_words, to_words};
use serde_json::{Map, Value};

fn unsupported(what: &str) -> String {
    format!("{what} is not supported by cumulo's JSONata")
}

/// `$formatNumber(number, picture, options?)`.
pub fn format_number(
    x: f64,
    picture: &str,
    options: Option<&Map<String, Value>>,
) -> Result<String, String> {
    let opt = |k: &str, d: char| -> char {
        options
            .and_then(|o| o.get(k))
            .and_then(Value::as_str)
            .and_then(|s| s.chars().next())
            .unwrap_or(d)
    };
    let (dec, group, pct, mille, exp_sep) = (
        opt("decimal-separator", '.'),
        opt("grouping-separator", ','),
        opt("percent", '%'),
        opt("per-mille", '\u{2030}'),
        opt("exponent-separator", 'e'),
    );
    let subs: Vec<&str> = picture.split(';').collect();
    if subs.len() > 2 {
        return Err(
            "D3080: The picture string must only contain a maximum of two sub-pictures".into(),
        );
    }
    let (sub, negative_prefix) = match (x < 0.0, subs.get(1)) {
        (true, Some(n)) => (*n, false),
        (true, None) => (subs[0], true),
        _ => (subs[0], false),
    };
    let active = |c: char| c.is_ascii_digit() || c == '#' || c == dec || c == group;
    let cs: Vec<char> = sub.chars().collect();
    let first = cs.iter().position(|c| active(*c)).unwrap_or(cs.len());
    let last = cs.iter().rposition(|c| active(*c)).map_or(first, |i| i + 1);
    let (prefix, body, suffix): (String, String, String) = (
        cs[..first].iter().collect(),
        cs[first..last.max(first)].iter().collect(),
        cs[last.max(first)..].iter().collect(),
    );
    let (body, exp_pic) = match body.split_once(exp_sep) {
        Some((m, e)) => (m.to_string(), Some(e.to_string())),
        None => (body, None),
    };
    let mut value = x.abs();
    if prefix.contains(pct) || suffix.contains(pct) {
        value *= 100.0;
    } else if prefix.contains(mille) || suffix.contains(mille) {
        value *= 1000.0;
    }
    let (int_pic, frac_pic) = match body.split_once(dec) {
        Some((i, f)) => (i.to_string(), f.to_string()),
        None => (body.clone(), String::new()),
    };
    let mut min_int = int_pic.chars().filter(char::is_ascii_digit).count();
    let mut min_frac = frac_pic.chars().filter(char::is_ascii_digit).count();
    let mut max_frac = frac_pic
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == '#')
        .count();
    // An exponent scales the mantissa to as many integer digits as the picture has mandatory
    // ones (XPath's scaling factor), as jsonata's format-number does.
    let mut exponent: Option<(usize, i32)> = None;
    if let Some(e) = &exp_pic {
        let scaling = min_int as i32;
        if min_int == 0 && max_frac == 0 {
            (min_frac, max_frac) = (1, 1);
        }
        if min_int == 0 && int_pic.contains('#') {
            min_int = 1;
        }
        let min_exp = e.chars().filter(char::is_ascii_digit).count();
        let mut n = 0i32;
        if min_exp > 0 && value != 0.0 && value.is_finite() {
            let (lo, hi) = (10f64.powi(scaling - 1), 10f64.powi(scaling));
            while value < lo {
                value *= 10.0;
                n -= 1;
            }
            while value > hi {
                value /= 10.0;
                n += 1;
            }
        }
        exponent = Some((min_exp, n));
    }
    let grouping = int_pic
        .rfind(group)
        .map(|i| int_pic[i + group.len_utf8()..].chars().count());
    let text = format!("{value:.max_frac$}");
    let (int_digits, frac_digits) = text.split_once('.').unwrap_or((&text, ""));
    let mut frac = frac_digits.to_string();
    while frac.len() > min_frac && frac.ends_with('0') {
        frac.pop();
    }
    let mut int = int_digits.trim_start_matches('0').to_string();
    while int.chars().count() < min_int {
        int.insert(0, '0');
    }
    if int.is_empty() && frac.is_empty() {
        int.push('0');
    }
    if let Some(g) = grouping.filter(|g| *g > 0) {
        let digits: Vec<char> = int.chars().collect();
        let mut out = String::new();
        for (i, c) in digits.iter().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(g) {
                out.push(group);
            }
            out.push(*c);
        }
        int = out;
    }
    let mut out = String::new();
    if negative_prefix {
        out.push('-');
    }
    out.push_str(&prefix);
    out.push_str(&int);
    if !frac.is_empty() {
        out.push(dec);
        out.push_str(&frac);
    }
    if let Some((min_exp, n)) = exponent.filter(|(m, _)| *m > 0) {
        out.push(exp_sep);
        if n < 0 {
            out.push('-');
        }
        out.push_str(&format!("{:0min_exp$}", n.unsigned_abs()));
    }
    out.push_str(&suffix);
    Ok(out)
}

/// A picture's primary format and whether its modifier (after the last `;`) asks for an
/// ordinal (`o`) rather than a cardinal (`c`).
fn modifier(picture: &str) -> (&str, bool) {
    match picture.rsplit_once(';') {
        Some((p, m)) if m.starts_with(['o', 'c']) => (p, m.starts_with('o')),
        _ => (picture, false),
    }
}

/// `n` (at least 1) in letters: `a`..`z`, then `aa`, as jsonata numbers with `a`/`A`.
fn letters(mut n: u64, a: char) -> String {
    let mut out = Vec::new();
    while n > 0 {
        out.push(char::from(a as u8 + ((n - 1) % 26) as u8));
        n = (n - 1) / 26;
    }
    out.iter().rev().collect()
}

/// `$formatInteger(number, picture)`.
pub fn format_integer(n: i64, picture: &str) -> Result<String, String> {
    let (picture, ordinal) = modifier(picture);
    let sign = if n < 0 { "-" } else { "" };
    match picture {
        "I" => return Ok(format!("{sign}{}", roman(n.abs()))),
        "i" => return Ok(format!("{sign}{}", roman(n.abs()).to_lowercase())),
        "w" | "W" | "Ww" => {
            let words = to_words(n.unsigned_abs(), ordinal);
            return Ok(format!("{sign}{}", cased(words, picture)));
        }
        "a" | "A" => {
            let a = picture.chars().next().unwrap_or('a');
            return Ok(format!("{sign}{}", letters(n.unsigned_abs(), a)));
        }
        _ => {}
    }
    let digits = picture.chars().filter(char::is_ascii_digit).count();
    if digits == 0 && !picture.contains('#') {
        return Err(unsupported(&format!(
            "The $formatInteger picture '{picture}'"
        )));
    }
    let sep = picture.chars().find(|c| !c.is_ascii_digit() && *c != '#');
    let group = sep.and_then(|s| picture.rfind(s).map(|i| picture.len() - i - 1));
    let mut s = format!("{:0width$}", n.unsigned_abs(), width = digits);
    if let (Some(sep), Some(g)) = (sep, group.filter(|g| *g > 0)) {
        let cs: Vec<char> = s.chars().collect();
        s = String::new();
        for (i, c) in cs.iter().enumerate() {
            if i > 0 && (cs.len() - i).is_multiple_of(g) {
                s.push(sep);
            }
            s.push(*c);
        }
    }
    if n < 0 {
        s.insert(0, '-');
    }
    if ordinal {
        s.push_str(ordinal_suffix(n.abs()));
    }
    Ok(s)
}

/// `$parseInteger(text, picture)`: `None` when the text does not fit the picture.
pub fn parse_integer(text: &str, picture: &str) -> Result<Option<i64>, String> {
    let (picture, _) = modifier(picture);
    if matches!(picture, "w" | "W" | "Ww") {
        return Ok(from_words(text).and_then(|n| i64::try_from(n).ok()));
    }
    if matches!(picture, "I" | "i") {
        let value = |c: char| match c.to_ascii_uppercase() {
            'I' => Some(1),
            'V' => Some(5),
            'X' => Some(10),
            'L' => Some(50),
            'C' => Some(100),
            'D' => Some(500),
            'M' => Some(1000),
            _ => None,
        };
        let vs: Option<Vec<i64>> = text.chars().map(value).collect();
        let Some(vs) = vs else { return Ok(None) };
        let mut total = 0;
        for (i, v) in vs.iter().enumerate() {
            if vs.get(i + 1).is_some_and(|next| next > v) {
                total -= v;
            } else {
                total += v;
            }
        }
        return Ok(Some(total));
    }
    if !picture.chars().any(|c| c.is_ascii_digit() || c == '#') {
        return Err(unsupported(&format!(
            "The $parseInteger picture '{picture}'"
        )));
    }
    let digits: String = text
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    Ok(digits.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn number_pictures_format_as_xpath_says() {
        let cases = [
            (12345.6, "#,###.00", "12,345.60"),
            (1234.5678, "#,##0.00", "1,234.57"),
            (0.5, "#.00", ".50"),
            (0.5, "0.0#", "0.5"),
            (-3.0, "0", "-3"),
            (-3.0, "0;(0)", "(3)"),
            (0.25, "#0%", "25%"),
            (5.0, "000", "005"),
            (1234567.0, "$#,##0", "$1,234,567"),
        ];
        for (x, pic, want) in cases {
            assert_eq!(
                format_number(x, pic, None).as_deref(),
                Ok(want),
                "{x} {pic}"
            );
        }
        let euro = json!({"decimal-separator": ",", "grouping-separator": "."});
        assert_eq!(
            format_number(1234.5, "#.##0,00", euro.as_object()).as_deref(),
            Ok("1.234,50")
        );
        // Exponents: the mantissa has the picture's mandatory integer digits.
        for (x, pic, want) in [
            (1234.5678, "00.000e0", "12.346e2"),
            (0.234, "0.0e0", "2.3e-1"),
            (0.234, "#.00e0", "0.23e0"),
            (0.234, ".00e0", ".23e0"),
            (1234.5678, "0.0e00", "1.2e03"),
            (-1234.5678, "0.00e0", "-1.23e3"),
            (0.0, "0.0e0", "0.0e0"),
        ] {
            assert_eq!(
                format_number(x, pic, None).as_deref(),
                Ok(want),
                "{x} {pic}"
            );
        }
    }

    #[test]
    fn integer_pictures_format_and_parse() {
        assert_eq!(format_integer(7, "000").as_deref(), Ok("007"));
        assert_eq!(format_integer(1234567, "#,##0").as_deref(), Ok("1,234,567"));
        assert_eq!(format_integer(2024, "I").as_deref(), Ok("MMXXIV"));
        assert_eq!(format_integer(14, "i").as_deref(), Ok("xiv"));
        for (n, pic, want) in [
            (123, "w", "one hundred and twenty-three"),
            (123, "W", "ONE HUNDRED AND TWENTY-THREE"),
            (123, "Ww", "One Hundred and Twenty-Three"),
            (21, "w;o", "twenty-first"),
            (-5, "w", "-five"),
            (22, "#0;o", "22nd"),
            (28, "a", "ab"),
            (3, "A", "C"),
        ] {
            assert_eq!(format_integer(n, pic).as_deref(), Ok(want), "{n} {pic}");
        }
        assert_eq!(
            parse_integer("one hundred and twenty-three", "w"),
            Ok(Some(123))
        );
        assert_eq!(parse_integer("Twenty-First", "Ww;o"), Ok(Some(21)));
        assert_eq!(parse_integer("many", "w"), Ok(None));
        assert_eq!(parse_integer("1,234,567", "#,##0"), Ok(Some(1234567)));
        assert_eq!(parse_integer("MMXXIV", "I"), Ok(Some(2024)));
        assert_eq!(parse_integer("abc", "0"), Ok(None));
    }
}
