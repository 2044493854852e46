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

const NUL_PATTERN = '^[^\\u0000]*$';

/** Turns the first Ajv error into a sentence that names the field, without schema jargon. */
export function validationError(errors: ErrorObject[], part: string): InvalidInputError {
  const e = errors[0];
  if (!e) return new InvalidInputError(`${part} is not valid`);
  const field = e.instancePath
    ? e.instancePath.slice(1).replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~')
    : part;
  const p = e.params as Record<string, unknown>;
  const chars = (n: unknown) => `${n} character${n === 1 ? '' : 's'}`;
  const what = (() => {
    switch (e.keyword) {
      case 'required':
        return `${e.instancePath ? `${field}.` : ''}${p.missingProperty} is required`;
      case 'type':
        return `${field} must be ${p.type === 'object' ? 'a JSON object' : `a ${p.type}`}`;
      case 'int64':
        return `${field} must be an integer from ${INT64_MIN} to ${INT64_MAX}`;
      case 'decimalInteger':
        return `${field} must be an integer from ${p.min} to ${p.max}, in decimal digits`;
      case 'minLength':
        return `${field} must have at least ${chars(p.limit)}`;
      case 'maxLength':
        return `${field} must have at most ${chars(p.limit)}`;
      case 'pattern':
        return p.pattern === NUL_PATTERN
          ? `${field} must not contain the NUL character (U+0000)`
          : `${field} must match ${p.pattern}`;
      case 'minimum':
      case 'maximum':
        return `${field} must be ${e.keyword === 'minimum' ? '>=' : '<='} ${p.limit}`;
      case 'additionalProperties':
        return `${field} has the member ${JSON.stringify(p.additionalProperty)}, which it cannot have`;
      case 'format':
        return `${field} must be a ${p.format} value`;
      default:
        return `${field} ${e.message ?? 'is not valid'}`;
    }
  })();
  return new InvalidInputError(what);
}
