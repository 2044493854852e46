/**
 * The longest wait a subscriber's Retry-After is read as: a hundred years, far past any retry
 * window, and a time the stores hold as an integer of milliseconds. A longer value counts as this.
 */
export const MAX_RETRY_AFTER_MS = 100 * 365 * 86_400_000;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d\\d):(\\d\\d):(\\d\\d)';
/** RFC 9110 §5.6.7's three forms: IMF-fixdate, and the obsolete RFC 850 and asctime forms. */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d\\d) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC_850 = new RegExp(`^${LONG_DAY}, (\\d\\d)-${MONTH}-(\\d\\d) ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/** An HTTP-date in epoch milliseconds (always GMT), or null when the text is not one. */
export function parseHttpDate(text: string, now: number): number | null {
  let parts: [day: string, month: string, year: number, h: string, m: string, s: string] | undefined;
  let m = IMF_FIXDATE.exec(text);
  if (m) parts = [m[1]!, m[2]!, Number(m[3]), m[4]!, m[5]!, m[6]!];
  else if ((m = RFC_850.exec(text))) {
    // A two-digit year more than 50 years ahead is in the past century (RFC 9110 §5.6.7).
    const thisYear = new Date(now).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    parts = [m[1]!, m[2]!, year, m[4]!, m[5]!, m[6]!];
  } else if ((m = ASCTIME.exec(text))) parts = [m[2]!.trim(), m[1]!, Number(m[6]), m[3]!, m[4]!, m[5]!];
  if (parts === undefined) return null;
  const [day, month, year, ...time] = parts;
  const [h, min, s] = time.map(Number) as [number, number, number];
  const at = Date.UTC(year, MONTHS.indexOf(month), Number(day), h, min, s);
  // Date.UTC rolls 31 Feb over into March, and 25:00 into the next day: such a date is not one.
  const back = new Date(at);
  const exact =
    back.getUTCDate() === Number(day) &&
    back.getUTCHours() === h &&
    back.getUTCMinutes() === min &&
    back.getUTCSeconds() === s;
  return exact ? at : null;
}

/**
 * A subscriber's Retry-After (RFC 9110 §10.2.3: a number of seconds, or an HTTP-date) as a wait
 * in whole milliseconds from `now`, between 0 and MAX_RETRY_AFTER_MS: a date in the past is no
 * wait, a wait longer than the bound is the bound. Anything else (negative, fractional, a date in
 * another shape, garbage) is not a Retry-After and reads as null, as does its absence.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    // Compared as seconds before multiplying: "9" × 400 is Infinity as a number. Leading zeros
    // count for nothing ("0002" is 2 s), so they do not count towards the length either.
    const digits = text.replace(/^0+(?=\d)/, '');
    const seconds = digits.length > 15 ? Infinity : Number(digits);
    return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  }
  const at = parseHttpDate(text, now);
  return at === null ? null : Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}
