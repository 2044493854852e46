// The script of `GET /docs` (docs.ts serves it as docs/docs.js): Swagger UI with five small plugins.
// - Guide after the operations: the document's description opens with a short introduction and
//   continues with "## " sections (tokens, the client, errors, rate limits). Shown whole above the
//   operations, it pushed them ~1,750 px down; the page shows the introduction on top, so that
//   Authorize and the operations are in the first screen, and the sections after the operations.
// - Readable types: Swagger UI labels an allOf by its parts, and a part that is a $ref not yet
//   resolved as "any": NewPlant read "(object & any)". An "any" part of an allOf adds nothing and
//   equal parts say one thing, so "(object & any)" is written "object". Likewise a oneOf of $refs
//   (a batch's operation: "object | (any | any | any | any)") adds nothing to the type it states.
// - Rate-limit headers once: every response of an operation that counts requests declares
//   RateLimit-Limit, -Remaining and -Reset (any of them may carry them, and Spectral's OWASP rule
//   asks every 2xx and 4xx to say so), and each response repeated the same three rows: POST
//   /plants expanded was 7,000 px. The guide's "Rate limits" says what they mean; an operation
//   shows them on its first response that has them, and on no other.
// - Examples as placeholders: optional parameters keep their examples in their schema, where
//   Swagger UI does not fill them in (it sends what it fills in, and an If-Match or a filter
//   nobody asked for answered 412 or []); the empty input shows the first one as a hint.
// - Exact integers: Swagger UI shows a JSON body as JSON.stringify(JSON.parse(body)), which rounds
//   an integer past 2^53 (the quick start's id 9223372036854775807 showed as
//   9223372036854776000). A body with such an integer is shown indented from its own digits
//   instead (JSON.parse's source text and JSON.rawJSON, in every browser since 2023); others as
//   Swagger UI shows them.
// validatorUrl: null keeps Swagger UI from sending the document to its public validator.
export const PAGE_SCRIPT = `'use strict';
function splitDescription(text) {
  const at = typeof text === 'string' ? text.search(/^## /m) : -1;
  return at < 0 ? [text, ''] : [text.slice(0, at).trim(), text.slice(at)];
}

function readableType(type) {
  for (let before = ''; before !== type; ) {
    before = type;
    type = type.replace(/\\(([^()|]*&[^()|]*)\\)/g, (group, inner) => {
      const parts = [...new Set(inner.split(' & ').filter((part) => part !== 'any'))];
      return parts.length === 0 ? 'any' : parts.length === 1 ? parts[0] : '(' + parts.join(' & ') + ')';
    });
  }
  return type.replace(/^(\\w+) \\| \\(any(?: \\| any)*\\)$/, '$1');
}

function GuideAfterOperations(system) {
  const h = system.React.createElement;
  const fullDescription = () => system.specSelectors.info().get('description');
  return {
    statePlugins: {
      spec: {
        wrapSelectors: {
          selectInfoDescriptionField: () => () => splitDescription(fullDescription())[0],
        },
      },
    },
    wrapComponents: {
      Models: (Models, { getComponent }) => (props) => {
        const Markdown = getComponent('Markdown', true);
        const guide = splitDescription(fullDescription())[1];
        return h(
          'div',
          null,
          guide && h('section', { className: 'guide info' }, h('div', { className: 'description' }, h(Markdown, { source: guide }))),
          h(Models, props),
        );
      },
    },
  };
}

function ReadableTypes(system) {
  const h = system.React.createElement;
  return {
    wrapComponents: {
      JSONSchema202012KeywordType: () => ({ schema, isCircular }) =>
        h(
          'strong',
          { className: 'json-schema-2020-12__attribute json-schema-2020-12__attribute--primary' },
          readableType(system.fn.jsonSchema202012.getType(schema)) + (isCircular ? ' [circular]' : ''),
        ),
    },
  };
}

function isRateLimitHeader(value, name) {
  return /^ratelimit-/i.test(name);
}

function RateLimitHeadersOnce(system) {
  const h = system.React.createElement;
  return {
    wrapComponents: {
      responses: (Responses) => (props) => {
        let shown = false;
        const responses = props.responses.map((response) => {
          const headers = system.Im.Map.isMap(response) ? response.get('headers') : undefined;
          if (!system.Im.Map.isMap(headers) || !headers.some(isRateLimitHeader)) return response;
          if (shown) return response.set('headers', headers.filterNot(isRateLimitHeader));
          shown = true;
          return response;
        });
        return h(Responses, { ...props, responses });
      },
    },
  };
}

function ExamplesAsPlaceholders(system) {
  const h = system.React.createElement;
  return {
    wrapComponents: {
      JsonSchemaForm: (Form) => (props) => {
        const examples = props.schema && props.schema.get && props.schema.get('examples');
        const first = examples && examples.first ? examples.first() : undefined;
        const hint = typeof first === 'string' || typeof first === 'number' ? ', e.g. ' + first : '';
        return h(Form, { ...props, description: props.description + hint });
      },
    },
  };
}

/** The body indented, each integer past 2^53 as its own digits; undefined when it has none. */
function exactlyIndented(text) {
  if (typeof JSON.rawJSON !== 'function') return undefined;
  let inexact = false;
  const keep = (key, value, context) => {
    if (typeof value !== 'number' || Number.isSafeInteger(value) || !context || !/^-?\\d+$/.test(context.source)) return value;
    inexact = true;
    return JSON.rawJSON(context.source);
  };
  try {
    const value = JSON.parse(text, keep);
    return inexact ? JSON.stringify(value, null, '  ') : undefined;
  } catch {
    return undefined;
  }
}

function ExactIntegers() {
  return {
    wrapComponents: {
      responseBody: (ResponseBody, system) => (props) => {
        const h = system.React.createElement;
        const exact =
          /json/i.test(props.contentType || '') && typeof props.content === 'string'
            ? exactlyIndented(props.content)
            : undefined;
        if (exact === undefined) return h(ResponseBody, props);
        const HighlightCode = system.getComponent('HighlightCode', true);
        return h(
          'div',
          null,
          h('h5', null, 'Response body'),
          h(HighlightCode, { language: 'json', downloadable: true, fileName: 'response.json', canCopy: true }, exact),
        );
      },
    },
  };
}

window.ui = SwaggerUIBundle({
  url: new URL('openapi.json', document.baseURI).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  tryItOutEnabled: true,
  displayRequestDuration: true,
  persistAuthorization: false,
  validatorUrl: null,
  docExpansion: 'list',
  defaultModelsExpandDepth: 1,
  plugins: [GuideAfterOperations, ReadableTypes, RateLimitHeadersOnce, ExamplesAsPlaceholders, ExactIntegers],
});
`;
