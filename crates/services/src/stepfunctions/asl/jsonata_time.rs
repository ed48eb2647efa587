//! JSONata's date/time pictures (`$fromMillis`, `$toMillis`, `$now`): XPath `format-dateTime`
//! picture strings such as `[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]`, with the
//! timezone argument (`"-0500"`). Components: year `Y`, month `M`, day `D`, day of year `d`,
//! day of week `F`, ISO week `W` and week-year `X`, hours `H`/`h`, `P` (am/pm), minutes `m`,
//! seconds `s`, fractional seconds `f`, timezone `Z`/`z`, calendar `C` and era `E`; numbers
//! padded to the picture's digits, names (`N`, `n`, `Nn`) cut to a width (`,3-3`), ordinals
//! (`1o`), roman numerals (`I`, `i`), numbers in words (`w`, `Ww`), week of month `w` and the
//! month `x` that week belongs to. Week-based dates are not parsed back (jsonata's `D3136`).
//! Errors carry JSONata's codes (`D3132: ...`).

use super::jsonata_words::{cased, to_words};
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

/// `$toMillis(timestamp, picture)`: `None` when the text does not match the picture.
pub fn parse(text: &str, picture_text: &str) -> Result<Option<i64>, String> {
    let parts = picture(picture_text)?;
    let cs: Vec<char> = text.chars().collect();
    let mut at = 0;
    // Y M D H m s f, then day of year, 12-hour hour, pm, offset seconds.
    let mut got: [Option<i64>; 7] = [None; 7];
    let (mut yday, mut h12, mut pm, mut off) = (None, None, None, 0i64);
    for (i, p) in parts.iter().enumerate() {
        let m = match p {
            Part::Lit(s) => {
                let n = s.chars().count();
                if cs.get(at..at + n).map(|w| w.iter().collect::<String>()) != Some(s.clone()) {
                    return Ok(None);
                }
                at += n;
                continue;
            }
            Part::Comp(m) => m,
        };
        let adjacent = matches!(parts.get(i + 1), Some(Part::Comp(_)));
        let rest = &cs[at..];
        let word = |list: &[&str]| -> Option<(usize, usize)> {
            list.iter().enumerate().find_map(|(k, full)| {
                let full: Vec<char> = full.chars().collect();
                let short = m.max_width.map_or(full.len(), |w| w.min(full.len()));
                [full.len(), short].into_iter().find_map(|n| {
                    let cand = rest.get(..n)?;
                    cand.iter()
                        .zip(&full)
                        .all(|(a, b)| a.eq_ignore_ascii_case(b))
                        .then_some((k, n))
                })
            })
        };
        let digits = |max: Option<usize>| -> Option<(i64, usize)> {
            let n = rest
                .iter()
                .take(max.unwrap_or(usize::MAX))
                .take_while(|c| c.is_ascii_digit())
                .count();
            let v: String = rest[..n].iter().collect();
            v.parse().ok().map(|v| (v, n))
        };
        let width = adjacent.then(|| m.digits());
        match (m.component, m.is_name()) {
            ('M', true) => {
                let Some((k, n)) = word(&MONTHS) else {
                    return Ok(None);
                };
                got[1] = Some(k as i64 + 1);
                at += n;
            }
            ('F', true) | ('C', _) | ('E', _) => {
                let list: &[&str] = match m.component {
                    'F' => &DAYS,
                    'C' => &["ISO"],
                    _ => &["AD"],
                };
                let Some((_, n)) = word(list) else {
                    return Ok(None);
                };
                at += n;
            }
            ('P', _) => {
                let Some((k, n)) = word(&["am", "pm"]) else {
                    return Ok(None);
                };
                pm = Some(k == 1);
                at += n;
            }
            ('Z' | 'z', _) => {
                let mut r = rest;
                if m.component == 'z' {
                    if r.len() < 3 || r[..3].iter().collect::<String>() != "GMT" {
                        return Ok(None);
                    }
                    r = &r[3..];
                    at += 3;
                }
                if r.first() == Some(&'Z') {
                    at += 1;
                    continue;
                }
                let sign = match r.first() {
                    Some('+') => 1,
                    Some('-') => -1,
                    _ => return Ok(None),
                };
                let body: String = r[1..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit() || **c == ':')
                    .collect();
                at += 1 + body.chars().count();
                let (hh, mm) = match body.split_once(':') {
                    Some((h, mm)) => (h.to_string(), mm.to_string()),
                    None if body.len() > 2 => (
                        body[..body.len() - 2].to_string(),
                        body[body.len() - 2..].to_string(),
                    ),
                    None => (body.clone(), "0".into()),
                };
                let (Ok(hh), Ok(mm)) = (hh.parse::<i64>(), mm.parse::<i64>()) else {
                    return Ok(None);
                };
                off = sign * (hh * 3600 + mm * 60);
            }
            (c, _) => {
                if matches!(m.presentation.as_str(), "I" | "i" | "w" | "W" | "Ww") {
                    return Err(format!(
                        "The date/time picture presentation [{c}{}] (roman numerals or words) cannot be parsed by cumulo's JSONata",
                        m.presentation
                    ));
                }
                if matches!(c, 'W' | 'X' | 'w' | 'x') {
                    // jsonata parses no week-based date (ISO week-year, week of month).
                    return Err("D3136: The date/time picture string is missing specifiers required to parse the timestamp".into());
                }
                let Some((v, n)) = digits(width) else {
                    return Ok(None);
                };
                at += n;
                if m.ordinal {
                    at += rest[n..].iter().take_while(|c| c.is_alphabetic()).count();
                }
                let v = if c == 'f' {
                    let scale = 10f64.powi(n as i32);
                    ((v as f64 / scale) * 1000.0).round() as i64
                } else {
                    v
                };
                match c {
                    'Y' => got[0] = Some(v),
                    'M' => got[1] = Some(v),
                    'D' => got[2] = Some(v),
                    'H' => got[3] = Some(v),
                    'm' => got[4] = Some(v),
                    's' => got[5] = Some(v),
                    'f' => got[6] = Some(v),
                    'd' => yday = Some(v),
                    'h' => h12 = Some(v),
                    _ => {}
                }
            }
        }
    }
    if at != cs.len() {
        return Ok(None);
    }
    if let Some(h) = h12 {
        got[3] = Some(h % 12 + if pm == Some(true) { 12 } else { 0 });
    }
    let now = Utc::now();
    let current = [
        now.year() as i64,
        now.month() as i64,
        now.day() as i64,
        now.hour() as i64,
        now.minute() as i64,
        now.second() as i64,
        now.timestamp_subsec_millis() as i64,
    ];
    let lowest = [0, 1, 1, 0, 0, 0, 0];
    if yday.is_some() {
        got[1] = Some(1);
        got[2] = Some(1);
    }
    let first = got.iter().position(Option::is_some);
    let last = got.iter().rposition(Option::is_some);
    let (Some(first), Some(last)) = (first, last) else {
        return Err(
            "D3136: The date/time picture string is missing specifiers required to parse the timestamp"
                .into(),
        );
    };
    if got[first..=last].iter().any(Option::is_none) {
        return Err(
            "D3136: The date/time picture string is missing specifiers required to parse the timestamp"
                .into(),
        );
    }
    let v: Vec<i64> = (0..7)
        .map(|k| got[k].unwrap_or(if k < first { current[k] } else { lowest[k] }))
        .collect();
    let Some(mut day) = NaiveDate::from_ymd_opt(v[0] as i32, v[1] as u32, v[2] as u32) else {
        return Ok(None);
    };
    if let Some(d) = yday {
        match day.checked_add_days(chrono::Days::new((d - 1).max(0) as u64)) {
            Some(x) => day = x,
            None => return Ok(None),
        }
    }
    let Some(t) = day.and_hms_milli_opt(v[3] as u32, v[4] as u32, v[5] as u32, v[6] as u32) else {
        return Ok(None);
    };
    Ok(Some(t.and_utc().timestamp_millis() - off * 1000))
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
            assert_eq!(parse(text, pic), Ok(want), "{text} {pic}");
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
        let e = parse("2017-W45", "[X0001]-W[W01]").unwrap_err();
        assert!(e.starts_with("D3136: "), "{e}");
        let e = parse("seventh", "[Dw]").unwrap_err();
        assert!(e.contains("cannot be parsed"), "{e}");
        let e = format(T, Some("[Y"), None).unwrap_err();
        assert!(e.starts_with("D3135: "), "{e}");
        let e = parse("2017 07", "[Y] [D]").unwrap_err();
        assert!(e.starts_with("D3136: "), "{e}");
        assert!(
            format(T, None, Some("5 hours"))
                .unwrap_err()
                .contains("±HHMM")
        );
    }
}
