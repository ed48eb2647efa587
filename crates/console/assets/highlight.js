// Syntax highlighting of templates, JSON or YAML, into text nodes inside spans (never HTML):
// keys, strings, numbers, booleans/null, comments and YAML's short-form tags (!Ref, !Sub...).
import { el } from "./app.js";

const JSON_TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;
const YAML_LINE = /^(\s*(?:-\s+)*)([^\s#'"][^:#]*?|"[^"]*"|'[^']*')(:)(\s|$)(.*)$/;
const YAML_VALUE = /(#.*$)|(![A-Za-z:]+)|("(?:[^"\\]|\\.)*"|'(?:[^']|'')*')|\b(true|false|null|yes|no)\b|(-?\b\d+(?:\.\d+)?\b)/g;

function tokens(text, re, kinds) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const i = m.slice(1).findIndex((g) => g !== undefined);
    out.push(kinds(m, i));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function json(text) {
  return tokens(text, JSON_TOKEN, (m, i) => {
    if (i === 0 || i === 1) {
      return m[2] ? [el("span", { class: "hl-key" }, m[1]), m[2]] : el("span", { class: "hl-str" }, m[1]);
    }
    return el("span", { class: i === 2 ? "hl-num" : "hl-lit" }, m[0]);
  }).flat();
}

function yamlValue(text) {
  const cls = ["hl-com", "hl-tag", "hl-str", "hl-lit", "hl-num"];
  return tokens(text, YAML_VALUE, (m, i) => el("span", { class: cls[i] }, m[0]));
}

function yaml(text) {
  const out = [];
  for (const line of text.split("\n")) {
    const m = line.match(YAML_LINE);
    if (m) out.push(m[1], el("span", { class: "hl-key" }, m[2]), m[3], m[4], ...yamlValue(m[5]));
    else out.push(...yamlValue(line));
    out.push("\n");
  }
  out.pop();
  return out;
}

/** A fragment of highlighted `text`. */
export function highlight(text) {
  const frag = document.createDocumentFragment();
  const isJson = /^\s*[{[]/.test(text);
  frag.append(...(isJson ? json(text) : yaml(text)));
  return frag;
}
