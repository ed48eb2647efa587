//! JSONata's date/time pictures (`$fromMillis`, `$toMillis`, `$now`): XPath `format-dateTime`
//! picture strings such as `[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]`, with the
//! timezone argument (`"-0500"`). Components: year `Y`, month `M`, day `D`, day of year `d`,
//! day of week `F`, ISO week `W` and week-year `X`, hours `H`/`h`, `P` (am/pm), minutes `m`,
//! seconds `s`, fractional seconds `f`, timezone `Z`/`z`, calendar `C` and era `E`; numbers
//! padded to the picture's digits, names (`N`, `n`, `Nn`) cut to a width (`,3-3`), ordinals
//! (`1o`), roman numerals (`I`, `i`), numbers in words (`w`, `Ww`), week of month `w` and the
//! month `x` that week belongs to. `$toMillis` reads them back as jsonata does (roman numerals
//! and words too); week-based dates are not parsed back (jsonata's `D3136`).
//! Errors carry JSONata's codes (`D3132: ...`).

use super::jsonata_words::{cased, from_words, to_words, word_keys};
use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, TimeZone, Timelike, Utc};

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// The picture JSONata formats with when a timezone but no picture is given.
const ISO_PICTURE: &str = "[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]";

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Lit(String),
    Comp(Marker),
}

#[derive(Debug, Clone, PartialEq)]
struct Marker {
    component: char,
    /// The presentation modifier without its ordinal/`t` suffix (`0001`, `Nn`, `01:01`).
    presentation: String,
    ordinal: bool,
    /// `t` on a timezone: a zero offset is written `Z`.
    zulu: bool,
    /// The width modifier's maximum (`,*-3` or `,3-3`: names cut to 3 characters).
    max_width: Option<usize>,
    min_width: Option<usize>,
}

impl Marker {
    fn digits(&self) -> usize {
        self.presentation
            .chars()
            .filter(char::is_ascii_digit)
            .count()
            .max(1)
    }
    fn is_name(&self) -> bool {
        matches!(self.presentation.as_str(), "N" | "n" | "Nn")
    }
}

fn picture(text: &str) -> Result<Vec<Part>, String> {
    let cs: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if (c == '[' || c == ']') && cs.get(i + 1) == Some(&c) {
            lit.push(c);
            i += 2;
            continue;
        }
        if c != '[' {
            lit.push(c);
            i += 1;
            continue;
        }
        let Some(end) = cs[i..].iter().position(|&d| d == ']') else {
            return Err(
                "D3135: No matching closing bracket ']' in date/time picture string".into(),
            );
        };
        if !lit.is_empty() {
            out.push(Part::Lit(std::mem::take(&mut lit)));
        }
        let body: String = cs[i + 1..i + end]
            .iter()
            .filter(|c| !c.is_whitespace())
            .collect();
        out.push(Part::Comp(marker(&body)?));
        i += end + 1;
    }
    if !lit.is_empty() {
        out.push(Part::Lit(lit));
    }
    Ok(out)
}

fn marker(body: &str) -> Result<Marker, String> {
    let mut cs = body.chars();
    let Some(component) = cs.next() else {
        return Err("D3132: Unknown component specifier \"\" in date/time picture string".into());
    };
    if !"YMDdFWwXxHhPmsfZzCE".contains(component) {
        return Err(format!(
            "D3132: Unknown component specifier \"{component}\" in date/time picture string"
        ));
    }
    let rest: String = cs.collect();
    let (pres, width) = match rest.rsplit_once(',') {
        Some((p, w)) => (p.to_string(), Some(w.to_string())),
        None => (rest, None),
    };
    let (mut min_width, mut max_width) = (None, None);
    if let Some(w) = width {
        let (lo, hi) = w.split_once('-').unwrap_or((w.as_str(), "*"));
        min_width = lo.parse().ok();
        max_width = hi.parse().ok();
    }
    let mut presentation = pres;
    let mut ordinal = false;
    let mut zulu = false;
    if matches!(component, 'Z' | 'z') && presentation.ends_with('t') {
        zulu = true;
        presentation.pop();
    } else if presentation.len() > 1 && presentation.ends_with('o') {
        ordinal = true;
        presentation.pop();
    } else if presentation.len() > 1 && presentation.ends_with('c') {
        presentation.pop();
    }
    if presentation.is_empty() {
        presentation = match component {
            'F' | 'P' | 'C' | 'E' => "n",
            'm' | 's' => "01",
            'Z' | 'z' => "01:01",
            _ => "1",
        }
        .to_string();
    }
    if presentation == "Z" {
        return Err(format!(
            "The date/time picture presentation [{component}Z] (military timezone) is not supported by cumulo's JSONata"
        ));
    }
    Ok(Marker {
        component,
        presentation,
        ordinal,
        zulu,
        max_width,
        min_width,
    })
}

/// The offset a `"±HHMM"` timezone argument names.
fn offset(tz: Option<&str>) -> Result<FixedOffset, String> {
    let Some(tz) = tz else {
        return Ok(FixedOffset::east_opt(0).expect("zero offset"));
    };
    let (sign, digits) = match tz.strip_prefix('-') {
        Some(d) => (-1, d),
        None => (1, tz.strip_prefix('+').unwrap_or(tz)),
    };
    let n: Option<i32> = (digits.len() == 4 && digits.chars().all(|c| c.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten();
    n.and_then(|n| FixedOffset::east_opt(sign * ((n / 100) * 3600 + (n % 100) * 60)))
        .ok_or_else(|| format!("The timezone '{tz}' must be a string of the form \"±HHMM\""))
}

pub(super) fn roman(mut n: i64) -> String {
    let table = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut s = String::new();
    for (v, r) in table {
        while n >= v {
            s.push_str(r);
            n -= v;
        }
    }
    s
}

pub(super) fn ordinal_suffix(n: i64) -> &'static str {
    match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

fn number(m: &Marker, n: i64) -> String {
    let mut s = match m.presentation.as_str() {
        "I" => roman(n),
        "i" => roman(n).to_lowercase(),
        p @ ("w" | "W" | "Ww") => {
            let words = cased(to_words(n.unsigned_abs(), m.ordinal), p);
            return if n < 0 { format!("-{words}") } else { words };
        }
        _ => {
            let mut s = format!("{:0width$}", n.abs(), width = m.digits());
            if let Some(max) = m.max_width
                && m.component == 'Y'
                && s.len() > max
            {
                s = s[s.len() - max..].to_string();
            }
            if n < 0 {
                s.insert(0, '-');
            }
            s
        }
    };
    if m.ordinal {
        s.push_str(ordinal_suffix(n));
    }
    s
}

fn name(m: &Marker, full: &str) -> String {
    let mut s: String = match m.max_width {
        Some(w) => full.chars().take(w.max(1)).collect(),
        None => full.to_string(),
    };
    match m.presentation.as_str() {
        "N" => s = s.to_uppercase(),
        "n" => s = s.to_lowercase(),
        _ => {}
    }
    s
}

fn zone(m: &Marker, seconds: i32) -> String {
    if m.zulu && seconds == 0 {
        return "Z".into();
    }
    let sign = if seconds < 0 { '-' } else { '+' };
    let (h, mins) = (seconds.abs() / 3600, (seconds.abs() % 3600) / 60);
    let p = &m.presentation;
    let text = if let Some((hh, _)) = p.split_once(|c: char| !c.is_ascii_digit()) {
        let sep: String = p.chars().filter(|c| !c.is_ascii_digit()).collect();
        format!("{sign}{h:0w$}{sep}{mins:02}", w = hh.len())
    } else if p.len() >= 3 {
        format!("{sign}{h:0w$}{mins:02}", w = p.len() - 2)
    } else if mins == 0 {
        format!("{sign}{h:0w$}", w = p.len())
    } else {
        format!("{sign}{h:0w$}:{mins:02}", w = p.len())
    };
    if m.component == 'z' {
        format!("GMT{text}")
    } else {
        text
    }
}

/// The Monday starting a month's first week: the week holding its first Thursday (ISO 8601's
/// rule for years, which XPath applies to months).
fn first_week(year: i32, month: u32) -> NaiveDate {
    let first = NaiveDate::from_ymd_opt(year, month, 1).unwrap_or_default();
    let weekday = first.weekday().number_from_monday() as i64;
    if weekday > 4 {
        first + chrono::Duration::days(8 - weekday)
    } else {
        first - chrono::Duration::days(weekday - 1)
    }
}

/// A date's week of month and the month (1-12) that week belongs to: days before the month's
/// first week are in the previous month's last week, days from the next month's first week on
/// are in its week 1 (as jsonata computes `[w]` and `[x]`).
fn week_of_month(d: NaiveDate) -> (i64, i64) {
    let (y, m) = (d.year(), d.month());
    let next = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    let prev = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    let weeks = |start: NaiveDate| (d - start).num_days().div_euclid(7) + 1;
    let start = first_week(y, m);
    let start_next = first_week(next.0, next.1);
    if d >= start_next {
        (1, next.1 as i64)
    } else if d < start {
        (weeks(first_week(prev.0, prev.1)), prev.1 as i64)
    } else {
        (weeks(start), m as i64)
    }
}

fn component(m: &Marker, t: &DateTime<FixedOffset>) -> String {
    let millis = t.timestamp_subsec_millis() as i64;
    match m.component {
        'Y' => number(m, t.year() as i64),
        'M' if m.is_name() => name(m, MONTHS[t.month0() as usize]),
        'M' => number(m, t.month() as i64),
        'D' => number(m, t.day() as i64),
        'd' => number(m, t.ordinal() as i64),
        'F' if m.is_name() => name(m, DAYS[t.weekday().num_days_from_monday() as usize]),
        'F' => number(m, t.weekday().number_from_monday() as i64),
        'W' => number(m, t.iso_week().week() as i64),
        'w' => number(m, week_of_month(t.date_naive()).0),
        'x' if m.is_name() => name(m, MONTHS[week_of_month(t.date_naive()).1 as usize - 1]),
        'x' => number(m, week_of_month(t.date_naive()).1),
        'X' => number(m, t.iso_week().year() as i64),
        'H' => number(m, t.hour() as i64),
        'h' => number(m, (t.hour() as i64 + 11) % 12 + 1),
        'P' => name(m, if t.hour() < 12 { "am" } else { "pm" }),
        'm' => number(m, t.minute() as i64),
        's' => number(m, t.second() as i64),
        'f' => {
            let mut s = format!("{millis:03}");
            let width = m.digits().max(m.min_width.unwrap_or(0));
            while s.len() < width {
                s.push('0');
            }
            s.truncate(width);
            s
        }
        'Z' | 'z' => zone(m, t.offset().local_minus_utc()),
        'C' => name(m, "ISO"),
        _ => name(m, "AD"),
    }
}

/// `$fromMillis(millis, picture?, timezone?)`.
pub fn format(millis: i64, picture_text: Option<&str>, tz: Option<&str>) -> Result<String, String> {
    let off = offset(tz)?;
    let Some(utc) = Utc.timestamp_millis_opt(millis).single() else {
        return Err(format!("D1001: Number out of range: {millis}"));
    };
    let t = utc.with_timezone(&off);
    if picture_text.is_none() && tz.is_none() {
        return Ok(utc.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    let mut out = String::new();
    for p in picture(picture_text.unwrap_or(ISO_PICTURE))? {
        match p {
            Part::Lit(s) => out.push_str(&s),
            Part::Comp(m) => out.push_str(&component(&m, &t)),
        }
    }
    Ok(out)
}

/// `$toMillis(timestamp)`: an ISO 8601 timestamp (a date alone is its midnight UTC; no offset
/// is UTC).
pub fn parse_iso(s: &str) -> Result<i64, String> {
    let bad = || {
        format!(
            "D3110: The argument of the toMillis function must be an ISO 8601 formatted timestamp. Given {}",
            serde_json::Value::String(s.to_string())
        )
    };
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Ok(d.timestamp_millis());
    }
    let (date, time) = s.split_once('T').unwrap_or((s, ""));
    let mut ymd = date.split('-');
    let y: i32 = ymd.next().and_then(|v| v.parse().ok()).ok_or_else(bad)?;
    let mo: u32 = ymd
        .next()
        .map_or(Some(1), |v| v.parse().ok())
        .ok_or_else(bad)?;
    let d: u32 = ymd
        .next()
        .map_or(Some(1), |v| v.parse().ok())
        .ok_or_else(bad)?;
    let day = NaiveDate::from_ymd_opt(y, mo, d).ok_or_else(bad)?;
    let (time, zone) = match time.find(['Z', '+', '-']) {
        Some(i) => (&time[..i], &time[i..]),
        None => (time, ""),
    };
    let mut hms = time.split(':');
    let num = |v: Option<&str>| -> Result<f64, String> {
        v.map_or(Ok(0.0), |v| v.parse::<f64>().map_err(|_| bad()))
    };
    let (h, m, sec) = if time.is_empty() {
        (0.0, 0.0, 0.0)
    } else {
        (num(hms.next())?, num(hms.next())?, num(hms.next())?)
    };
    let off = match zone {
        "" | "Z" => 0,
        z => {
            let digits: String = z[1..].chars().filter(|c| *c != ':').collect();
            let n: i64 = digits.parse().map_err(|_| bad())?;
            let secs = (n / 100) * 3600 + (n % 100) * 60;
            if z.starts_with('-') { -secs } else { secs }
        }
    };
    let midnight = day.and_hms_opt(0, 0, 0).ok_or_else(bad)?.and_utc();
    let ms = ((h * 3600.0 + m * 60.0 + sec) * 1000.0).round() as i64;
    Ok(midnight.timestamp_millis() + ms - off * 1000)
}

/// One picture part as jsonata's `generateRegex` matches it when parsing: the text it takes
/// (a regular expression) and how that text becomes the component's value.
enum Reader {
    /// Digits (`parse_width` of them when an integer follows with no literal between), with
    /// an ordinal suffix when the picture asks for one.
    Decimal {
        ordinal: bool,
    },
    Roman {
        upper: bool,
    },
    Words,
    Letters {
        upper: bool,
    },
    /// Fractional seconds: the first three digits.
    Fraction,
    /// A name looked up exactly as written (`November`, `Nov` under `,3-3`, `am`).
    Name(Vec<(String, i64)>),
    /// `±HH[sep]MM`, after `GMT` for `z`.
    Offset {
        separator: Option<char>,
    },
}

/// The regular expression and reader of one marker, as jsonata generates them.
fn reader(m: &Marker, parse_width: Option<usize>) -> Result<(String, Reader), String> {
    let c = m.component;
    if matches!(c, 'Z' | 'z') {
        let mut seps = m
            .presentation
            .chars()
            .filter(|x| !x.is_ascii_digit() && *x != '#');
        let separator = match (seps.next(), seps.next()) {
            (Some(x), None) => Some(x),
            _ => None,
        };
        let mut re = if c == 'z' {
            "GMT".to_string()
        } else {
            String::new()
        };
        re.push_str("[-+][0-9]+");
        if let Some(x) = separator {
            re.push_str(&regex::escape(&x.to_string()));
            re.push_str("[0-9]+");
        }
        return Ok((re, Reader::Offset { separator }));
    }
    if c == 'f' {
        return Ok(("[0-9]+".into(), Reader::Fraction));
    }
    if m.is_name() || !"YMDdFWwXxHhms".contains(c) {
        let names: Vec<(String, i64)> = match c {
            'M' | 'x' => MONTHS
                .iter()
                .enumerate()
                .map(|(k, n)| (n.to_string(), k as i64 + 1))
                .collect(),
            'F' => DAYS
                .iter()
                .enumerate()
                .map(|(k, n)| (n.to_string(), k as i64 + 1))
                .collect(),
            'P' => [("am", 0), ("AM", 0), ("pm", 1), ("PM", 1)]
                .iter()
                .map(|(n, v)| (n.to_string(), *v))
                .collect(),
            _ => {
                return Err(format!(
                    "D3133: The 'name' modifier can only be applied to months and days in the date/time picture string, not {c}"
                ));
            }
        };
        let names = names
            .into_iter()
            .map(|(n, v)| match m.max_width {
                Some(w) if c != 'P' => (n.chars().take(w).collect(), v),
                _ => (n, v),
            })
            .collect();
        return Ok(("[a-zA-Z]+".into(), Reader::Name(names)));
    }
    Ok(match m.presentation.as_str() {
        "I" | "i" => (
            if m.presentation == "I" {
                "[MDCLXVI]+"
            } else {
                "[mdclxvi]+"
            }
            .into(),
            Reader::Roman {
                upper: m.presentation == "I",
            },
        ),
        "A" | "a" => (
            if m.presentation == "A" {
                "[A-Z]+"
            } else {
                "[a-z]+"
            }
            .into(),
            Reader::Letters {
                upper: m.presentation == "A",
            },
        ),
        "w" | "W" | "Ww" => {
            let mut alts: Vec<String> = word_keys().iter().map(|w| regex::escape(w)).collect();
            alts.push("and".into());
            alts.push("[\\-, ]".into());
            (format!("(?:{})+", alts.join("|")), Reader::Words)
        }
        p if p.chars().any(|x| x.is_ascii_digit()) => {
            let mut re = match parse_width {
                Some(n) => format!("[0-9]{{{n}}}"),
                None => "[0-9]+".into(),
            };
            if m.ordinal {
                re.push_str("(?:th|st|nd|rd)");
            }
            (re, Reader::Decimal { ordinal: m.ordinal })
        }
        p => {
            return Err(format!(
                "D3130: Formatting or parsing an integer as a sequence starting with {p} is not supported by this implementation"
            ));
        }
    })
}

/// The digits an integer marker is read with when another integer follows it directly
/// (jsonata's `mandatoryDigits`: the picture's digits, at least the minimum width, a year's
/// maximum width).
fn mandatory_digits(m: &Marker) -> usize {
    let mut n = m.presentation.chars().filter(char::is_ascii_digit).count();
    if let Some(min) = m.min_width.filter(|w| *w > n) {
        n = min;
    }
    if m.component == 'Y'
        && let Some(max) = m.max_width
    {
        n = max;
    }
    n
}

fn is_integer(m: &Marker) -> bool {
    !m.is_name() && "YMDdFWwXxHhms".contains(m.component)
}

/// A matched text as its component's value; `None` where jsonata's reading gives nothing
/// (a name it does not know), `Err` where it gives NaN.
fn read(r: &Reader, text: &str, part: &Part) -> Result<Option<i64>, String> {
    let nan = || {
        let marker = match part {
            Part::Comp(m) => format!("{}{}", m.component, m.presentation),
            Part::Lit(l) => l.clone(),
        };
        Err(format!(
            "The text '{text}' is not a number the date/time picture marker [{marker}] reads (jsonata's value is NaN)"
        ))
    };
    Ok(Some(match r {
        Reader::Decimal { ordinal } => {
            let digits = if *ordinal {
                &text[..text.len().saturating_sub(2)]
            } else {
                text
            };
            match digits.parse() {
                Ok(v) => v,
                Err(_) => return nan(),
            }
        }
        Reader::Roman { upper } => {
            let value = |x: char| match x {
                'M' => Some(1000),
                'D' => Some(500),
                'C' => Some(100),
                'L' => Some(50),
                'X' => Some(10),
                'V' => Some(5),
                'I' => Some(1),
                _ => None,
            };
            let text = if *upper {
                text.to_string()
            } else {
                text.to_uppercase()
            };
            let (mut total, mut max) = (0i64, 1i64);
            for x in text.chars().rev() {
                let Some(v) = value(x) else { return nan() };
                if v < max {
                    total -= v;
                } else {
                    max = v;
                    total += v;
                }
            }
            total
        }
        Reader::Words => match from_words(text).and_then(|n| i64::try_from(n).ok()) {
            Some(v) => v,
            None => return nan(),
        },
        Reader::Letters { upper } => {
            let a = if *upper { 'A' } else { 'a' } as i64;
            text.chars()
                .fold(0i64, |acc, x| acc * 26 + (x as i64 - a + 1))
        }
        Reader::Fraction => {
            let first: String = text.chars().take(3).collect();
            format!("{first:0<3}").parse().unwrap_or(0)
        }
        Reader::Name(names) => match names.iter().find(|(n, _)| n == text) {
            Some((_, v)) => *v,
            None => return Ok(None),
        },
        Reader::Offset { separator } => {
            let body = text.strip_prefix("GMT").unwrap_or(text);
            let num = |s: &str| s.parse::<i64>().unwrap_or(0);
            let (h, m) = match separator.and_then(|x| body.split_once(x)) {
                Some((h, m)) => (num(h), num(m)),
                None if body.len() <= 3 => (num(body), 0),
                None => (num(&body[..3]), num(&body[3..])),
            };
            // As jsonata reads it: `-05:30` is -5 hours and +30 minutes.
            h * 60 + m
        }
    }))
}

/// `$toMillis(timestamp, picture)` as jsonata's `parseDateTime`: the picture becomes one
/// regular expression (literals, numbers in digits, roman numerals or words, names, offsets;
/// matched ignoring case), each component is read from its match, and the date and time are
/// completed from the most significant component given (left of it from `now`, right of it
/// the lowest value; a gap is `D3136`). `None` when the text does not match.
pub fn parse(text: &str, picture_text: &str, now: i64) -> Result<Option<i64>, String> {
    let parts = picture(picture_text)?;
    // Each part's regular expression, and a component's reader.
    let mut readers: Vec<(String, Option<(char, Reader)>)> = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        match p {
            Part::Lit(l) => readers.push((regex::escape(l), None)),
            Part::Comp(m) => {
                let width = match parts.get(i + 1) {
                    Some(Part::Comp(next)) if is_integer(m) && is_integer(next) => {
                        Some(mandatory_digits(m))
                    }
                    _ => None,
                };
                let (re, r) = reader(m, width)?;
                readers.push((re, Some((m.component, r))));
            }
        }
    }
    let full: String = readers.iter().map(|(re, _)| format!("({re})")).collect();
    let re = regex::RegexBuilder::new(&format!("^{full}$"))
        .case_insensitive(true)
        .build()
        .map_err(|e| format!("The date/time picture '{picture_text}': {e}"))?;
    let Some(caps) = re.captures(text) else {
        return Ok(None);
    };
    // Each component once, the last reading winning; `Some(None)`: read as nothing.
    let mut got: Vec<(char, Option<i64>)> = Vec::new();
    for (k, (_, comp)) in readers.iter().enumerate() {
        let Some((c, r)) = comp else { continue };
        let text = caps.get(k + 1).map_or("", |x| x.as_str());
        let v = read(r, text, &parts[k])?;
        got.retain(|(x, _)| x != c);
        got.push((*c, v));
    }
    if got.is_empty() {
        return Ok(None);
    }
    let value = |c: char| got.iter().find(|(x, _)| *x == c).and_then(|(_, v)| *v);
    let truthy = |c: char| value(c).is_some_and(|v| v != 0);
    let mask = |parts: &str| {
        parts
            .chars()
            .fold(0u32, |acc, c| (acc << 1) | u32::from(truthy(c)))
    };
    let is = |kind: u32, mask: u32| (!kind & mask) == 0 && (kind & mask) != 0;
    let date = mask("YXMxWwdD");
    let (date_a, date_c) = (is(0b1010_0001, date), is(0b0101_0100, date));
    let date_b = !date_a && is(0b1000_0010, date);
    let date_d = !date_c && is(0b0100_1000, date);
    let time = mask("PHhmsf");
    let time_b = !is(0b01_0111, time) && is(0b10_1111, time);
    let date_parts = if date_b {
        "YD"
    } else if date_c {
        "XxwF"
    } else if date_d {
        "XWF"
    } else {
        "YMD"
    };
    if date_c || date_d {
        // jsonata parses no week-based date.
        return Err(MISSING.into());
    }
    let time_parts = if time_b { "Phmsf" } else { "Hmsf" };
    let now_t = DateTime::from_timestamp_millis(now).unwrap_or_default();
    let fragment = |c: char| -> i64 {
        match c {
            'Y' => now_t.year() as i64,
            'M' => now_t.month() as i64,
            'D' => now_t.day() as i64,
            'H' => now_t.hour() as i64,
            'h' => match now_t.hour() % 12 {
                0 => 12,
                h => h as i64,
            },
            'P' => i64::from(now_t.hour() >= 12),
            'm' => now_t.minute() as i64,
            's' => now_t.second() as i64,
            _ => now_t.timestamp_subsec_millis() as i64,
        }
    };
    let (mut started, mut ended) = (false, false);
    let mut v = std::collections::HashMap::new();
    for c in date_parts.chars().chain(time_parts.chars()) {
        match value(c) {
            Some(x) => {
                if ended {
                    return Err(MISSING.into());
                }
                started = true;
                v.insert(c, x);
            }
            None if started => {
                v.insert(c, i64::from(matches!(c, 'M' | 'D' | 'd')));
                ended = true;
            }
            None => {
                v.insert(c, fragment(c));
            }
        }
    }
    let get = |c: char| v.get(&c).copied().unwrap_or(0);
    let mut month = (get('M') - 1).max(0);
    let mut day = get('D');
    let year = get('Y');
    if date_b {
        let Some(d) = utc_millis(year, 0, 1 + value('d').unwrap_or(0) - 1, 0) else {
            return Ok(None);
        };
        let d = DateTime::from_timestamp_millis(d).unwrap_or_default();
        month = d.month0() as i64;
        day = d.day() as i64;
    }
    let hour = if time_b {
        let h = get('h');
        (if h == 12 { 0 } else { h }) + if get('P') == 1 { 12 } else { 0 }
    } else {
        get('H')
    };
    let clock = ((hour * 60 + get('m')) * 60 + get('s')) * 1000 + get('f');
    let Some(mut millis) = utc_millis(year, month, day, clock) else {
        return Ok(None);
    };
    if let Some(off) = value('Z').or(value('z')).filter(|o| *o != 0) {
        millis -= off * 60_000;
    }
    Ok(Some(millis))
}

const MISSING: &str =
    "D3136: The date/time picture string is missing specifiers required to parse the timestamp";

/// JavaScript's `Date.UTC(year, month0, day)` plus `clock` milliseconds: months and days
/// out of range carry over, and years 0 to 99 are 1900 to 1999.
fn utc_millis(year: i64, month0: i64, day: i64, clock: i64) -> Option<i64> {
    let year = if (0..=99).contains(&year) {
        year + 1900
    } else {
        year
    };
    let year = year + month0.div_euclid(12);
    let first = NaiveDate::from_ymd_opt(
        i32::try_from(year).ok()?,
        month0.rem_euclid(12) as u32 + 1,
        1,
    )?;
    let days = first
        .signed_duration_since(NaiveDate::from_ymd_opt(1970, 1, 1)?)
        .num_days()
        + day
        - 1;
    Some(days * 86_400_000 + clock)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_510_067_274_972; // 2017-11-07T15:07:54.972Z, a Tuesday

    #[test]
    fn pictures_format_as_jsonata_does() {
        let cases = [
            (None, None, "2017-11-07T15:07:54.972Z"),
            (
                Some("[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001]Z"),
                None,
                "2017-11-07T15:07:54.972Z",
            ),
            (None, Some("-0500"), "2017-11-07T10:07:54.972-05:00"),
            (Some("[Y]-[M]-[D]"), None, "2017-11-7"),
            (Some("[D1o] [MNn] [Y]"), None, "7th November 2017"),
            (Some("[FNn], [D] [MNn,3-3]"), None, "Tuesday, 7 Nov"),
            (Some("[FNn,3-3] [MN] [Mn]"), None, "Tue NOVEMBER november"),
            (Some("[h]:[m01] [P]"), None, "3:07 pm"),
            (Some("[H01]:[m]:[s] [PN]"), None, "15:07:54 PM"),
            (Some("[Y,*-2]/[M01]"), None, "17/11"),
            (Some("[d] [F1] [W]"), None, "311 2 45"),
            (Some("[MI] [Yi]"), None, "XI mmxvii"),
            (Some("[H01]:[m01][Z]"), Some("+0530"), "20:37+05:30"),
            (Some("[Z0101] [z]"), Some("-0800"), "-0800 GMT-08:00"),
            (Some("[Z01:01t]"), None, "Z"),
            (Some("[[[Y]]]"), None, "[2017]"),
            (Some("[f01]"), None, "97"),
            (
                Some("week [w] of [xNn], [X]-W[W01]"),
                None,
                "week 2 of November, 2017-W45",
            ),
            (
                Some("[Dwo] [MNn] [Yw]"),
                None,
                "seventh November two thousand and seventeen",
            ),
            (Some("[FNn] the [DWwo]"), None, "Tuesday the Seventh"),
        ];
        for (pic, tz, want) in cases {
            assert_eq!(format(T, pic, tz).as_deref(), Ok(want), "{pic:?} {tz:?}");
        }
    }

    #[test]
    fn weeks_of_month_start_with_the_week_holding_the_first_thursday() {
        let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
        for (date, want) in [
            (day(2017, 11, 7), (2, 11)),
            (day(2017, 11, 30), (5, 11)),
            (day(2017, 1, 1), (5, 12)),
            (day(2018, 12, 31), (1, 1)),
            (day(2017, 12, 4), (1, 12)),
            (day(2017, 12, 3), (5, 11)),
        ] {
            assert_eq!(week_of_month(date), want, "{date}");
        }
    }

    #[test]
    fn pictures_parse_back_to_millis() {
        let cases = [
            (
                "2017-11-07T15:07:54.972Z",
                "[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001]Z",
                Some(T),
            ),
            ("20171107", "[Y0001][M01][D01]", Some(1_510_012_800_000)),
            (
                "7th November 2017",
                "[D1o] [MNn] [Y]",
                Some(1_510_012_800_000),
            ),
            (
                "Tue 7 Nov 2017",
                "[FNn,3-3] [D] [MNn,3-3] [Y]",
                Some(1_510_012_800_000),
            ),
            (
                "3:07 pm 2017-11-07",
                "[h]:[m01] [P] [Y]-[M]-[D]",
                Some(1_510_067_220_000),
            ),
            (
                "2017-11-07 10:07 -05:00",
                "[Y]-[M]-[D] [H]:[m] [Z]",
                Some(1_510_067_220_000),
            ),
            ("2017-311", "[Y]-[d]", Some(1_510_012_800_000)),
            ("not a date", "[Y]-[M]-[D]", None),
        ];
        for (text, pic, want) in cases {
            assert_eq!(parse(text, pic, T), Ok(want), "{text} {pic}");
        }
        assert_eq!(parse_iso("2017-11-07T15:07:54.972Z"), Ok(T));
        assert_eq!(parse_iso("2017-11-07"), Ok(1_510_012_800_000));
        assert_eq!(parse_iso("2017-11-07T10:07:54.972-05:00"), Ok(T));
        assert!(parse_iso("yesterday").unwrap_err().starts_with("D3110: "));
    }

    #[test]
    fn unsupported_and_malformed_pictures_say_which_component() {
        let e = format(T, Some("[Q]"), None).unwrap_err();
        assert_eq!(
            e,
            "D3132: Unknown component specifier \"Q\" in date/time picture string"
        );
        let e = parse("2017-W45", "[X0001]-W[W01]", T).unwrap_err();
        assert!(e.starts_with("D3136: "), "{e}");
        // jsonata reads lower-case numerals under [YI] as NaN: an error here.
        let e = parse("mmxvii", "[YI]", T).unwrap_err();
        assert!(e.contains("[YI]") && e.contains("NaN"), "{e}");
        let e = format(T, Some("[Y"), None).unwrap_err();
        assert!(e.starts_with("D3135: "), "{e}");
        let e = parse("2017 07", "[Y] [D]", T).unwrap_err();
        assert!(e.starts_with("D3136: "), "{e}");
        assert!(
            format(T, None, Some("5 hours"))
                .unwrap_err()
                .contains("±HHMM")
        );
    }
}
