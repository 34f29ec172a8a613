/** The error the programmatic API throws for a bad seed or fault patch, naming each field. */
import type { z } from 'zod';

export interface FieldProblem {
  field: string;
  message: string;
}

export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
  constructor(
    what: string,
    readonly details: FieldProblem[],
  ) {
    super(`invalid ${what}: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`);
  }
}

/** One problem per zod issue, an unknown key named as its own field. */
export function zodProblems(error: z.ZodError): FieldProblem[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => ({ field: [...path, k].join('.'), message: 'unknown field' }));
    return [{ field: path.join('.') || '(root)', message: issue.message }];
  });
}

/** Parses with `schema` or throws InvalidInputError. */
export function parseOrThrow<S extends z.ZodType>(schema: S, what: string, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new InvalidInputError(what, zodProblems(parsed.error));
  return parsed.data;
}
