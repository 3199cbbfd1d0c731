// A small Python tokenizer for duplicate detection: comments and whitespace (including indentation
// and line breaks) are dropped, every other token is kept verbatim. String literals are scanned as
// whole tokens (prefixes, triple quotes, escapes), so a `#` inside a string is not a comment.

const OPERATORS = [
  "**=",
  "//=",
  ">>=",
  "<<=",
  "...",
  "->",
  ":=",
  "**",
  "//",
  "<<",
  ">>",
  "<=",
  ">=",
  "==",
  "!=",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "&=",
  "|=",
  "^=",
  "@=",
];
const STRING_PREFIX = /^(?:[rRbBuUfFtT]{1,2})?("""|'''|"|')/;
const NAME_START = /[\p{L}\p{Nl}_]/u;
const NAME_PART = /[\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}_]/u;

export function pythonTokens(code: string): string[] {
  const out: string[] = [];
  const n = code.length;
  let i = 0;
  while (i < n) {
    const c = code.charAt(i);
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v") {
      i += 1;
      continue;
    }
    // A backslash at the end of a line joins lines: whitespace too.
    if (c === "\\" && (code[i + 1] === "\n" || code[i + 1] === "\r")) {
      i += 2;
      continue;
    }
    if (c === "#") {
      while (i < n && code[i] !== "\n") i += 1;
      continue;
    }
    const str = scanString(code, i);
    if (str > i) {
      out.push(code.slice(i, str));
      i = str;
      continue;
    }
    if (isNameStart(c)) {
      let j = i + 1;
      while (j < n && isNamePart(code.charAt(j))) j += 1;
      out.push(code.slice(i, j));
      i = j;
      continue;
    }
    if (isDigit(c) || (c === "." && isDigit(code.charAt(i + 1)))) {
      let j = i + 1;
      while (j < n) {
        const d = code.charAt(j);
        if (/[0-9A-Za-z_.]/.test(d)) j += 1;
        else if ((d === "+" || d === "-") && /[eE]/.test(code.charAt(j - 1)) && !/^0[xX]/.test(code.slice(i, j)))
          j += 1;
        else break;
      }
      out.push(code.slice(i, j));
      i = j;
      continue;
    }
    const op = OPERATORS.find((o) => code.startsWith(o, i));
    out.push(op ?? c);
    i += op ? op.length : 1;
  }
  return out;
}

/** Returns the index just past a string literal starting at `i`, or `i` when none starts there. */
function scanString(code: string, i: number): number {
  const m = STRING_PREFIX.exec(code.slice(i, i + 5));
  if (!m?.[1]) return i;
  // A name such as `bar` followed by a quote is not a prefix: only letters from the prefix set qualify.
  const quote = m[1];
  let j = i + m[0].length;
  const n = code.length;
  while (j < n) {
    const ch = code[j];
    // Even raw strings cannot end on an escaped quote, so a backslash always skips the next char.
    if (ch === "\\") {
      j += 2;
      continue;
    }
    if (code.startsWith(quote, j)) return j + quote.length;
    // An unterminated single-quoted string ends at the line break (a syntax error we tolerate).
    if (quote.length === 1 && ch === "\n") return j;
    j += 1;
  }
  return n;
}

const isDigit = (c: string) => c >= "0" && c <= "9";
const isAsciiLetter = (c: string) => (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_";
// ASCII first: the Unicode property regexes are only consulted for non-ASCII characters.
const isNameStart = (c: string) => isAsciiLetter(c) || (c > "\x7f" && NAME_START.test(c));
const isNamePart = (c: string) => isAsciiLetter(c) || isDigit(c) || (c > "\x7f" && NAME_PART.test(c));

/** Code with comments and all whitespace removed: equal for programs that differ only in those. */
export const normalizePython = (code: string): string => pythonTokens(code).join(" ");
