// Validates an example against the schema of the API document that holds it (JSON Schema 2020-12, as
// OpenAPI 3.1 means it, formats included): used by the document's example test and by the recorder.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export type ExampleCheck = (schema: object, example: unknown) => string | null;

/** A checker for the document's media schemas: null when the example is valid, else the errors. */
export function exampleChecker(components: Record<string, object>): ExampleCheck {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  // The components as one schema of $defs, so that each $ref of the document resolves within it.
  const toDefs = (schema: object) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"urn:atrium:components#/$defs/'));
  ajv.addSchema({ $id: 'urn:atrium:components', $defs: toDefs(components) });
  const compiled = new Map<string, ReturnType<Ajv2020['compile']>>();
  return (schema, example) => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(toDefs(schema));
      compiled.set(key, validate);
    }
    return validate(example) ? null : ajv.errorsText(validate.errors);
  };
}
