/**
 * What an analyzer, a statistical test or a loop stage returns: a one-line
 * summary a person reads, structured findings a program reads, and heavy
 * artifacts (figure data, tables, tensors) kept apart so a report can drop them.
 */
export interface Result<F = Record<string, unknown>, A = Record<string, unknown>> {
  readonly summary: string;
  readonly findings: F;
  readonly artifacts?: A;
}
