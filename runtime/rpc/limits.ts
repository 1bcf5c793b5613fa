// The one rule for the limits an app configures (counts, sizes, durations): checked the same way, refused with the same message.

/** The longest delay setTimeout honours; a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `value` when given, else `fallback`. A limit is a whole number from 0 to `max`; where `max` is Infinity, Infinity
 * itself is accepted too (no limit). Anything else (negative, fractional, NaN, above `max`) is a RangeError naming
 * the option, thrown where the app passed it rather than surfacing later as odd behaviour.
 */
export function limitOption(name: string, value: number | undefined, fallback: number, max = Infinity): number {
  if (value === undefined) return fallback;
  const whole = Number.isInteger(value) || (value === Infinity && max === Infinity);
  if (!whole || value < 0 || value > max) {
    throw new RangeError(`${name} must be a whole number from 0 to ${max}, got ${value}`);
  }
  return value;
}
