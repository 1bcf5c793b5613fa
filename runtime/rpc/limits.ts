// The one rule for the limits an app configures (counts, sizes, durations): checked the same way, refused with the same message.

/** The longest delay setTimeout honours; a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `value` when given, else `fallback`. A limit is a whole number from `min` (default 0) to `max`; where `max` is
 * Infinity, Infinity itself is accepted too (no limit). Anything else (below `min`, fractional, NaN, above `max`) is a
 * RangeError naming the option, thrown where the app passed it rather than surfacing later as odd behaviour.
 */
export function limitOption(
  name: string,
  value: number | undefined,
  fallback: number,
  max = Infinity,
  min = 0,
): number {
  if (value === undefined) return fallback;
  const whole = Number.isInteger(value) || (value === Infinity && max === Infinity);
  if (!whole || value < min || value > max) {
    throw new RangeError(`${name} must be a whole number from ${min} to ${max}, got ${value}`);
  }
  return value;
}
