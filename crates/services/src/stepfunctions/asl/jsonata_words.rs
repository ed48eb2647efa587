//! Numbers in English words, as jsonata's `numberToWords`/`wordsToNumber` write and read them
//! for `$formatInteger`/`$parseInteger` pictures `w`, `W`, `Ww` (and `;o` ordinals):
//! "One Hundred and Twenty-Three", "One Million, Two Hundred Thousand", "Twenty-First".

const FEW: [&str; 20] = [
    "Zero",
    "One",
    "Two",
    "Three",
    "Four",
    "Five",
    "Six",
    "Seven",
    "Eight",
    "Nine",
    "Ten",
    "Eleven",
    "Twelve",
    "Thirteen",
    "Fourteen",
    "Fifteen",
    "Sixteen",
    "Seventeen",
    "Eighteen",
    "Nineteen",
];
const ORDINALS: [&str; 20] = [
    "Zeroth",
    "First",
    "Second",
    "Third",
    "Fourth",
    "Fifth",
    "Sixth",
    "Seventh",
    "Eighth",
    "Ninth",
    "Tenth",
    "Eleventh",
    "Twelfth",
    "Thirteenth",
    "Fourteenth",
    "Fifteenth",
    "Sixteenth",
    "Seventeenth",
    "Eighteenth",
    "Nineteenth",
];
const DECADES: [&str; 9] = [
    "Twenty", "Thirty", "Forty", "Fifty", "Sixty", "Seventy", "Eighty", "Ninety", "Hundred",
];
const MAGNITUDES: [&str; 4] = ["Thousand", "Million", "Billion", "Trillion"];

/// `n` (not negative) in title-case words; `ordinal` for "Twenty-First".
pub fn to_words(n: u64, ordinal: bool) -> String {
    lookup(n, false, ordinal)
}

fn lookup(n: u64, prev: bool, ord: bool) -> String {
    if n <= 19 {
        let w = if ord { ORDINALS } else { FEW }[n as usize];
        format!("{}{w}", if prev { " and " } else { "" })
    } else if n < 100 {
        let mut w = format!(
            "{}{}",
            if prev { " and " } else { "" },
            DECADES[(n / 10) as usize - 2]
        );
        if !n.is_multiple_of(10) {
            w = format!("{w}-{}", lookup(n % 10, false, ord));
        } else if ord {
            w.pop();
            w.push_str("ieth");
        }
        w
    } else if n < 1000 {
        let mut w = format!(
            "{}{} Hundred",
            if prev { ", " } else { "" },
            FEW[(n / 100) as usize]
        );
        if !n.is_multiple_of(100) {
            w.push_str(&lookup(n % 100, true, ord));
        } else if ord {
            w.push_str("th");
        }
        w
    } else {
        let mag = (((n as f64).log10() / 3.0).floor() as usize).min(MAGNITUDES.len());
        let factor = 10u64.pow(mag as u32 * 3);
        let (mant, rest) = (n / factor, n % factor);
        let mut w = format!(
            "{}{} {}",
            if prev { ", " } else { "" },
            lookup(mant, false, false),
            MAGNITUDES[mag - 1]
        );
        if rest > 0 {
            w.push_str(&lookup(rest, true, ord));
        } else if ord {
            w.push_str("th");
        }
        w
    }
}

/// The words' case as the picture writes it: `w` lower, `W` upper, `Ww` title.
pub fn cased(words: String, picture: &str) -> String {
    match picture {
        "w" => words.to_lowercase(),
        "W" => words.to_uppercase(),
        _ => words,
    }
}

fn word_value(w: &str) -> Option<u64> {
    let lower = |s: &str| s.to_lowercase();
    if let Some(i) = FEW.iter().position(|f| lower(f) == w) {
        return Some(i as u64);
    }
    if let Some(i) = ORDINALS.iter().position(|f| lower(f) == w) {
        return Some(i as u64);
    }
    for (i, d) in DECADES.iter().enumerate() {
        let d = lower(d);
        if d == w || format!("{}ieth", &d[..d.len() - 1]) == w {
            return Some((i as u64 + 2) * 10);
        }
    }
    if w == "hundredth" {
        return Some(100);
    }
    for (i, m) in MAGNITUDES.iter().enumerate() {
        let m = lower(m);
        if m == w || format!("{m}th") == w {
            return Some(10u64.pow((i as u32 + 1) * 3));
        }
    }
    None
}

/// Every word [`from_words`] reads, in jsonata's order (its `wordValues`' keys), lower case:
/// what a `$toMillis` picture's words marker matches.
pub fn word_keys() -> Vec<String> {
    let lower = |s: &str| s.to_lowercase();
    let mut out: Vec<String> = FEW
        .iter()
        .chain(ORDINALS.iter())
        .map(|w| lower(w))
        .collect();
    for d in DECADES {
        let d = lower(d);
        let ieth = format!("{}ieth", &d[..d.len() - 1]);
        out.extend([d, ieth]);
    }
    out.push("hundredth".into());
    for m in MAGNITUDES {
        out.push(lower(m));
        out.push(format!("{}th", lower(m)));
    }
    out
}

/// The number the words say (any case), `None` when a word is not a number word.
pub fn from_words(text: &str) -> Option<u64> {
    let text = text.to_lowercase();
    let text = text
        .replace(", ", " ")
        .replace(" and ", " ")
        .replace('-', " ");
    let mut segs: Vec<u64> = vec![0];
    for part in text.split_whitespace() {
        let v = word_value(part)?;
        let top = segs.pop().unwrap_or(0);
        if v < 100 {
            if top >= 1000 {
                segs.push(top);
                segs.push(v);
            } else {
                segs.push(top + v);
            }
        } else {
            segs.push(top.checked_mul(v)?);
        }
    }
    segs.iter().try_fold(0u64, |a, b| a.checked_add(*b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_and_write_as_jsonata_does() {
        for (n, ord, words) in [
            (0, false, "Zero"),
            (7, true, "Seventh"),
            (20, true, "Twentieth"),
            (21, true, "Twenty-First"),
            (123, false, "One Hundred and Twenty-Three"),
            (123, true, "One Hundred and Twenty-Third"),
            (100, true, "One Hundredth"),
            (1000, false, "One Thousand"),
            (
                1_234_567,
                false,
                "One Million, Two Hundred and Thirty-Four Thousand, Five Hundred and Sixty-Seven",
            ),
            (1_000_000, true, "One Millionth"),
            (3_000_000_000_000_000, false, "Three Thousand Trillion"),
        ] {
            assert_eq!(to_words(n, ord), words, "{n}");
            assert_eq!(from_words(words), Some(n), "{words}");
        }
        assert_eq!(
            cased(to_words(123, false), "w"),
            "one hundred and twenty-three"
        );
        assert_eq!(from_words("twelve apples"), None);
        assert_eq!(from_words("one trillion trillion trillion"), None);
    }
}
