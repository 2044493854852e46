import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { InvalidInputError } from '../domain/errors.js';
import { INT64_MAX, INT64_MIN, isInt64 } from '../domain/int64.js';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** One Ajv for every request part (and every import line). No coercion: `"1"` is not an integer, and nothing is altered. */
export function createAjv(options: { validateSchema?: boolean } = {}): Ajv2020 {
  // Checking each schema against the JSON Schema meta-schema is a large part of start-up; the
  // document's schemas are checked once, by a test, instead (test/openapi/document.test.ts).
  const ajv = new Ajv2020({
    allErrors: false,
    coerceTypes: false,
    // The batch's operations are told apart by `op` (the document's discriminator): an error then
    // names what is wrong with the operation it is, not with each kind it is not.
    discriminator: true,
    useDefaults: true,
    strict: true,
    validateSchema: options.validateSchema ?? false,
  });
  ajv.addKeyword({
    keyword: 'int64',
    schemaType: 'boolean',
    errors: false,
    validate: (_schema: boolean, data: unknown) => isInt64(data),
  });
  ajv.addKeyword({
    keyword: 'decimalInteger',
    schemaType: 'object',
    modifying: true,
    errors: true,
    validate: decimalInteger,
  });
  ajv.addKeyword({
    keyword: 'textBoolean',
    schemaType: 'boolean',
    modifying: true,
    errors: true,
    validate: textBoolean,
  });
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX,
  });
  ajv.addVocabulary(['example']);
  return ajv;
}

interface DecimalIntegerSchema {
  min: string;
  max: string;
  bigint: boolean;
}

/** Checks a path or query value and replaces the text with the number it spells. */
function decimalInteger(
  this: unknown,
  schema: DecimalIntegerSchema,
  data: unknown,
  _parent?: unknown,
  cxt?: { parentData: Record<string, unknown>; parentDataProperty: string | number },
): boolean {
  const self = decimalInteger as unknown as { errors: unknown[] };
  if (
    typeof data !== 'string' ||
    !/^-?[0-9]{1,20}$/.test(data) ||
    BigInt(data) < BigInt(schema.min) ||
    BigInt(data) > BigInt(schema.max)
  ) {
    self.errors = [
      { keyword: 'decimalInteger', message: `must be an integer from ${schema.min} to ${schema.max}`, params: schema },
    ];
    return false;
  }
  if (cxt) cxt.parentData[cxt.parentDataProperty] = schema.bigint ? BigInt(data) : Number(data);
  return true;
}

/** A query value `true` or `false`, handed on as a boolean. */
function textBoolean(
  _schema: boolean,
  data: unknown,
  _parent?: unknown,
  cxt?: { parentData: Record<string, unknown>; parentDataProperty: string | number },
): boolean {
  if (data !== 'true' && data !== 'false') {
    (textBoolean as unknown as { errors: unknown[] }).errors = [
      { keyword: 'textBoolean', message: 'must be true or false', params: {} },
    ];
    return false;
  }
  if (cxt) cxt.parentData[cxt.parentDataProperty] = data === 'true';
  return true;
}

const NUL_PATTERN = '^[^\\u0000]*$';

/** What a request field's pattern asks, in words, where the pattern alone would be jargon. */
const PATTERN_WORDS: Readonly<Record<string, string>> = {
  [NUL_PATTERN]: 'must not contain the NUL character (U+0000)',
  '^(\\*|(W/)?"[!#-~]*")$': 'must be * or an entity tag in double quotes, as ETag sends it ("abc")',
};

/**
 * Where an error is, in the words of messages: `name.tag`, or for an item of an array (the
 * operations of a batch), `operations[3]: ` before the rest, so a message says first which item
 * it is about; the item itself is named in the singular (`operation`).
 */
function located(instancePath: string, part: string): { prefix: string; field: string; whole: boolean } {
  if (!instancePath) return { prefix: '', field: part, whole: true };
  const segments = instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const item = segments.findIndex((s) => /^[0-9]+$/.test(s));
  if (item < 1) return { prefix: '', field: segments.join('.'), whole: false };
  const array = segments.slice(0, item).join('.');
  const rest = segments.slice(item + 1);
  const singular = segments[item - 1]!.replace(/s$/, '');
  return {
    prefix: `${array}[${segments[item]}]: `,
    field: rest.length ? rest.join('.') : singular,
    whole: !rest.length,
  };
}

/** `array` → "an array", `[string, null]` → "a string or null": the schema's type in the sentence. */
function typeWords(type: string | string[]): string {
  const one = (t: string) =>
    t === 'object' ? 'a JSON object' : t === 'null' ? 'null' : `${/^[aeiou]/.test(t) ? 'an' : 'a'} ${t}`;
  return (Array.isArray(type) ? type : type.split(',')).map(one).join(' or ');
}

/** Turns the first Ajv error into a sentence that names the field, without schema jargon. */
export function validationError(errors: ErrorObject[], part: string): InvalidInputError {
  const e = errors[0];
  if (!e) return new InvalidInputError(`${part} is not valid`);
  // `whole`: the error is about the body, or an item, as a whole (a member it lacks is named alone).
  const { prefix, field, whole } = located(e.instancePath, part);
  const p = e.params as Record<string, unknown>;
  const chars = (n: unknown) => `${n} character${n === 1 ? '' : 's'}`;
  const what = (() => {
    switch (e.keyword) {
      case 'required':
        return `${whole ? '' : `${field}.`}${p.missingProperty} is required`;
      case 'type':
        return `${field} must be ${typeWords(p.type as string | string[])}`;
      case 'int64':
        return `${field} must be an integer from ${INT64_MIN} to ${INT64_MAX}`;
      case 'decimalInteger':
        return `${field} must be an integer from ${p.min} to ${p.max}, in decimal digits`;
      case 'minLength':
        return `${field} must have at least ${chars(p.limit)}`;
      case 'maxLength':
        return `${field} must have at most ${chars(p.limit)}`;
      case 'pattern':
        return `${field} ${PATTERN_WORDS[p.pattern as string] ?? `must match ${p.pattern}`}`;
      case 'minimum':
      case 'maximum':
        return `${field} must be ${e.keyword === 'minimum' ? '>=' : '<='} ${p.limit}`;
      case 'additionalProperties':
        return `${field} has the member ${JSON.stringify(p.additionalProperty)}, which it cannot have`;
      case 'format':
        return `${field} must be a ${p.format} value`;
      case 'enum':
        return `${field} must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
      case 'minItems':
        return `${field} must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`;
      case 'maxItems':
        return `${field} must have at most ${p.limit} items`;
      default:
        return `${field} ${e.message ?? 'is not valid'}`;
    }
  })();
  return new InvalidInputError(prefix + what);
}
