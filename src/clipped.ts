/**
 * A value a client sent, cut to `max` characters for a message: hostile inputs must not
 * bloat error bodies. A shortened value is marked with `…`, so it is not taken for the one
 * sent, and cut between characters: half of an emoji's surrogate pair would come back as an
 * unpaired escape.
 */
export function clipped(text: string, max = 64): string {
  if (text.length <= max) return text;
  return `${text.slice(0, /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max)}…`;
}
