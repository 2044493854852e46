// Strict I-JSON (RFC 7493) reader for request bodies.
//
// JSON.parse cannot be used: it rounds integers past 2^53 (the `id` field is an
// int64 and must survive digit for digit), keeps the last of duplicate member
// names, and accepts lone surrogates and noncharacters. This reader does a single
// pass over the decoded text and decides number values from their decimal digits,
// never through a float that might already have rounded them.
//
// RFC 7493 section 2.1: "Object names and string values in I-JSON messages MUST NOT
// include code points that identify Surrogates or Noncharacters as defined by
// [UNICODE]. This applies both to characters encoded directly in UTF-8 and to those
// which are escaped". Unicode's noncharacters are U+FDD0..U+FDEF and the last two
// code points of every plane (U+FFFE, U+FFFF, U+1FFFE, ..., U+10FFFF): 66 in all.

export class JsonReadError extends Error {
  constructor(
    message: string,
    /** Offset in UTF-16 code units into the decoded text where the problem is. */
    readonly position: number,
  ) {
    super(message);
    this.name = 'JsonReadError';
  }
}

/**
 * A number that is not a whole number but that a float would round to a whole
 * number (e.g. 1e-400 -> 0, 9007199254740993.5 -> 9007199254740994). Kept as its
 * source text so no validator can mistake it for an integer.
 */
export class InexactNumber {
  constructor(readonly text: string) {}
}

export interface ReadJsonOptions {
  maxDepth?: number;
  /**
   * The most values (objects, arrays, strings, numbers, literals) the document may hold: what it
   * costs to read grows with them, not with its bytes alone (`[{},{},…]` is one object per three).
   */
  maxValues?: number;
}

// ignoreBOM keeps a leading U+FEFF in the output so it can be rejected rather
// than silently dropped; fatal turns malformed UTF-8 into an exception instead
// of U+FFFD replacement characters.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// What each single-character escape stands for; \u is handled on its own.
const ESCAPES = new Map(
  Object.entries({ '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }),
);

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
// Whole numbers up to this many digits become exact bigints. It bounds the
// BigInt we build, so an exponent such as 1e999999999 cannot cost memory or time.
const MAX_BIGINT_DIGITS = 40;

export function readJson(input: Uint8Array | string, options?: ReadJsonOptions): unknown {
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else {
    try {
      text = decoder.decode(input);
    } catch {
      // The decoder does not say where the bad byte is, and a character offset
      // into text that could not be decoded would mean nothing anyway.
      throw new JsonReadError('invalid JSON: body is not valid UTF-8', 0);
    }
  }
  if (text.charCodeAt(0) === 0xfeff) fail(0, 'byte order mark is not allowed');
  return new Reader(text, options?.maxDepth ?? 32, options?.maxValues ?? Infinity).document();
}

function fail(position: number, what: string): never {
  throw new JsonReadError(`invalid JSON at position ${position}: ${what}`, position);
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20; // folds A-F onto a-f
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** A Unicode noncharacter (see the top of this file); `cp` is a code point, not a UTF-16 unit. */
export function isNoncharacter(cp: number): boolean {
  return (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe;
}

function codePointName(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * The objects the reader makes inherit nothing: their prototype is an object with no members and
 * no prototype, so "__proto__", "constructor" and "toString" are ordinary own keys, and `in` finds
 * only the members read. Made by a constructor, they keep V8's fast properties at the cost of a
 * literal; Object.create(null) makes each a dictionary (4 us an object: 1.4 s for the 340,000
 * empty objects a 1 MiB body can hold), and giving a literal a null prototype costs three times
 * as much as the constructor (a 1,000-operation batch read in 1.7 ms, where it was 1.2).
 */
const JsonObject = function JsonObject() {} as unknown as new () => Record<string, unknown>;
JsonObject.prototype = Object.create(null) as Record<string, unknown>;

class Reader {
  private pos = 0;
  private values = 0;
  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
    private readonly maxValues: number,
  ) {}

  document(): unknown {
    this.skipWhitespace();
    if (this.pos >= this.s.length) fail(this.pos, 'body is empty');
    const value = this.value(0);
    this.skipWhitespace();
    if (this.pos < this.s.length) fail(this.pos, 'unexpected data after the JSON value');
    return value;
  }

  private skipWhitespace(): void {
    const s = this.s;
    let c = s.charCodeAt(this.pos);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = s.charCodeAt(++this.pos);
  }

  /** `depth` is the number of containers enclosing this value. */
  private value(depth: number): unknown {
    if (++this.values > this.maxValues) {
      throw new JsonReadError(`the body holds more than ${this.maxValues} JSON values`, this.pos);
    }
    const c = this.s.charCodeAt(this.pos);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      // Checked before descending, so recursion never goes deeper than maxDepth.
      if (depth + 1 > this.maxDepth) fail(this.pos, `nesting deeper than ${this.maxDepth} levels`);
      return c === 0x7b ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === 0x22) return this.string();
    if (c === 0x2d || isDigit(c)) return this.number();
    if (this.literal('true')) return true;
    if (this.literal('false')) return false;
    if (this.literal('null')) return null;
    return fail(this.pos, `expected a value but found ${this.found()}`);
  }

  private found(): string {
    const c = this.s.charCodeAt(this.pos);
    if (Number.isNaN(c)) return 'end of input';
    if (c > 0x20 && c < 0x7f) return `'${String.fromCharCode(c)}'`;
    return `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  }

  /** Consumes the character `c` if it is next. */
  private eat(c: number): boolean {
    if (this.s.charCodeAt(this.pos) !== c) return false;
    this.pos++;
    return true;
  }

  private literal(word: string): boolean {
    if (!this.s.startsWith(word, this.pos)) return false;
    this.pos += word.length;
    return true;
  }

  private object(depth: number): Record<string, unknown> {
    const result = new JsonObject();
    this.pos++;
    this.skipWhitespace();
    if (this.eat(0x7d)) return result;
    for (;;) {
      const keyAt = this.pos;
      if (this.s.charCodeAt(keyAt) !== 0x22) {
        fail(keyAt, `expected a member name in double quotes but found ${this.found()}`);
      }
      const key = this.string();
      // Compared after unescaping, so "a" and "\u0061" collide as they should.
      if (key in result) {
        const shown = key.length > 64 ? `${key.slice(0, 64)}...` : key;
        fail(keyAt, `duplicate member name ${JSON.stringify(shown)}`);
      }
      this.skipWhitespace();
      if (!this.eat(0x3a)) fail(this.pos, "expected ':' after member name");
      this.skipWhitespace();
      result[key] = this.value(depth);
      this.skipWhitespace();
      if (this.eat(0x7d)) return result;
      if (!this.eat(0x2c)) fail(this.pos, `expected ',' or '}' but found ${this.found()}`);
      this.skipWhitespace();
    }
  }

  private array(depth: number): unknown[] {
    const result: unknown[] = [];
    this.pos++;
    this.skipWhitespace();
    if (this.eat(0x5d)) return result;
    for (;;) {
      result.push(this.value(depth));
      this.skipWhitespace();
      if (this.eat(0x5d)) return result;
      if (!this.eat(0x2c)) fail(this.pos, `expected ',' or ']' but found ${this.found()}`);
      this.skipWhitespace();
    }
  }

  private string(): string {
    const s = this.s;
    let i = this.pos + 1;
    let out = '';
    let chunk = i; // start of the run of characters copied verbatim
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        this.pos = i + 1;
        return out + s.slice(chunk, i);
      }
      if (c === 0x5c) {
        out += s.slice(chunk, i);
        const simple = ESCAPES.get(s.charAt(i + 1));
        const text = simple ?? this.unicodeEscape(i);
        out += text;
        // A simple escape is 2 characters; \uXXXX is 6 per UTF-16 unit it yields.
        i = chunk = i + (simple === undefined ? 6 * text.length : 2);
      } else if (!(c >= 0x20)) {
        // Written so NaN (past the end) lands here too rather than looping forever.
        this.pos = i;
        if (Number.isNaN(c)) fail(i, 'unterminated string');
        fail(i, `control character ${this.found()} must be escaped in a string`);
      } else if (c >= 0xd800 && c <= 0xdfff) {
        // Lone surrogates are only reachable for string input (decoded UTF-8 cannot hold
        // one); I-JSON forbids them raw just as much as escaped.
        const low = s.charCodeAt(i + 1);
        if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) fail(i, 'lone surrogate in string');
        const cp = ((c - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
        if (isNoncharacter(cp)) this.noncharacter(i, cp);
        i += 2;
      } else if (c >= 0xfdd0 && isNoncharacter(c)) {
        this.noncharacter(i, c);
      } else {
        i++;
      }
    }
  }

  private noncharacter(at: number, cp: number): never {
    this.pos = at;
    return fail(at, `the noncharacter ${codePointName(cp)} is not allowed in a string (I-JSON)`);
  }

  /** Decodes the \u escape at `at` (a backslash), as one character or a surrogate pair. */
  private unicodeEscape(at: number): string {
    if (this.s.charCodeAt(at + 1) !== 0x75) {
      fail(at, `invalid escape sequence '${this.s.slice(at, at + 2)}'`);
    }
    const unit = this.hex4(at + 2);
    if (unit < 0xd800 || unit > 0xdfff) {
      if (isNoncharacter(unit)) this.noncharacter(at, unit);
      return String.fromCharCode(unit);
    }
    // A surrogate is only valid as a \u high + \u low pair forming one code point.
    if (unit <= 0xdbff && this.s.startsWith('\\u', at + 6)) {
      const low = this.hex4(at + 8);
      if (low >= 0xdc00 && low <= 0xdfff) {
        const cp = ((unit - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
        if (isNoncharacter(cp)) this.noncharacter(at, cp);
        return String.fromCharCode(unit, low);
      }
    }
    return fail(at, 'invalid Unicode escape (lone surrogate)');
  }

  private hex4(at: number): number {
    let unit = 0;
    for (let i = at; i < at + 4; i++) {
      const d = hexDigit(this.s.charCodeAt(i));
      if (d < 0) fail(i, 'invalid Unicode escape: expected four hexadecimal digits after \\u');
      unit = unit * 16 + d;
    }
    return unit;
  }

  private number(): number | bigint | InexactNumber {
    const s = this.s;
    const start = this.pos;
    let i = start;
    if (s.charCodeAt(i) === 0x2d) i++;
    const intStart = i;
    const first = s.charCodeAt(i);
    if (first === 0x30) {
      if (isDigit(s.charCodeAt(++i))) fail(intStart, 'leading zeros are not allowed in numbers');
    } else if (isDigit(first)) {
      while (isDigit(s.charCodeAt(++i)));
    } else {
      this.pos = i;
      fail(i, `expected a digit but found ${this.found()}`);
    }
    const intEnd = i;
    let fracEnd = i;
    if (s.charCodeAt(i) === 0x2e) {
      if (!isDigit(s.charCodeAt(++i))) fail(i, 'expected a digit after the decimal point');
      while (isDigit(s.charCodeAt(++i)));
      fracEnd = i;
    }
    let exponent = 0;
    const e = s.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      const sign = s.charCodeAt(++i);
      const negative = sign === 0x2d;
      if (negative || sign === 0x2b) i++;
      if (!isDigit(s.charCodeAt(i))) fail(i, 'expected a digit in the exponent');
      // Past 2^53 (or at Infinity) this loses precision, but by then the exponent
      // dwarfs any digit count and only its magnitude matters.
      for (let c = s.charCodeAt(i); isDigit(c); c = s.charCodeAt(++i)) {
        exponent = exponent * 10 + c - 0x30;
      }
      if (negative) exponent = -exponent;
    }
    this.pos = i;
    const text = s.slice(start, i);
    // Common case: a plain integer below 10^15 is exact as a float (|| turns -0 into 0).
    if (i === intEnd && intEnd - intStart <= 15) return Number(text) || 0;
    const fraction = fracEnd > intEnd ? s.slice(intEnd + 1, fracEnd) : '';
    return numberValue(text, s.slice(intStart, intEnd) + fraction, exponent - fraction.length);
  }
}

/**
 * Value of `digits` x 10^`shift`, signed as `text` (the number's source) is. It is
 * decided from the digits, because a float has already rounded by the time it
 * could tell us whether the value was whole.
 */
function numberValue(text: string, digits: string, shift: number): number | bigint | InexactNumber {
  let first = 0;
  while (digits.charCodeAt(first) === 0x30) first++;
  if (first === digits.length) return 0; // every zero, including -0 and 0e5, is plain 0
  let last = digits.length;
  while (digits.charCodeAt(last - 1) === 0x30) last--;
  // Trailing zeros move into the exponent, so 100e-2 is seen as 1e0 and is whole.
  const scale = shift + (digits.length - last);
  if (scale >= 0) {
    const integerDigits = last - first + scale;
    // Below 10^15 a float holds the value exactly; past MAX_BIGINT_DIGITS it is a lost cause.
    if (integerDigits <= 15 || integerDigits > MAX_BIGINT_DIGITS) return Number(text);
    const sign = text.charCodeAt(0) === 0x2d ? '-' : '';
    const big = BigInt(`${sign}${digits.slice(first, last)}${'0'.repeat(scale)}`);
    return big <= MAX_SAFE && big >= -MAX_SAFE ? Number(big) : big;
  }
  // Not whole. If the float looks whole (or overflowed to Infinity), it lost the
  // fractional part, so hand back the text instead of a misleading number.
  const n = Number(text);
  return Number.isFinite(n) && !Number.isInteger(n) ? n : new InexactNumber(text);
}
