// One length limit for the names people give things (experiments, collections, datasets), shared
// by the forms (maxLength), the zod schemas and the database (a check constraint), so that what
// one layer accepts another never refuses. Names the control plane derives from a user's name
// ("<experiment>: train+dev n=4") go through `derivedName`, which keeps them inside the limit:
// a 186-character experiment name used to make its collection's name fail validation on every
// runner tick.
export const NAME_MAX_LENGTH = 200;

/** `${base}${suffix}`, with `base` shortened (ending in "…") so that the whole fits NAME_MAX_LENGTH. */
export function derivedName(base: string, suffix: string, max = NAME_MAX_LENGTH): string {
  const whole = `${base}${suffix}`;
  if (whole.length <= max) return whole;
  const room = Math.max(0, max - suffix.length - 1);
  // Cut on a code point boundary, so that no lone surrogate half is left at the end.
  const cut = Array.from(base).reduce((acc, ch) => (acc.length + ch.length <= room ? acc + ch : acc), "");
  return `${cut}…${suffix}`.slice(0, max);
}
