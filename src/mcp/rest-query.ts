import { paramsError } from '../api/api-error.js';
import { clipped } from '../clipped.js';
import { failedRest } from './rest-failure.js';
import type { ToolArguments, ToolContext } from './tool.js';

/** A REST answer's JSON: `text` is its body as REST wrote it (numbers keep their digits), `json` that text parsed. */
export interface RestJson {
  text: string;
  json: Record<string, unknown>;
}

/**
 * The query of a call's arguments, in the order `names` gives, named as REST names them:
 * an array is one comma-joined value, except `repeated` names, given once per element
 * (`input=…&input=…`). Only strings, numbers, booleans and arrays of strings pass; REST
 * itself then validates the values, so a refusal reads as its problem detail.
 */
export function queryOf(args: ToolArguments, names: readonly string[], repeated: readonly string[] = []): string {
  const pairs: string[] = [];
  const add = (name: string, text: string) =>
    pairs.push(`${name}=${encodeURIComponent(text).replaceAll('%2C', ',').replaceAll('%3A', ':')}`);
  for (const name of names) {
    const value = args[name];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') add(name, String(value));
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
      if (repeated.includes(name)) for (const v of value) add(name, v);
      else add(name, value.join(','));
    } else {
      const got = clipped(JSON.stringify(value) ?? String(value));
      throw paramsError([
        { param: name, message: `expected a string, number, boolean or array of strings, got ${got}` },
      ]);
    }
  }
  return pairs.join('&');
}

/** `GET <path>?<query>` in-process: its JSON, or the ApiError REST answered. */
export async function restJson(context: ToolContext, path: string, query: string): Promise<RestJson> {
  const answer = await context.rest(query === '' ? path : `${path}?${query}`);
  if (answer.status !== 200) throw failedRest(answer);
  const text = answer.body.toString('utf8');
  return { text, json: JSON.parse(text) as Record<string, unknown> };
}

/** What `GET <path>?<query>` costs: the `cost.units` of REST's answer to it with `dry_run=true`. */
export async function restCost(context: ToolContext, path: string, query: string): Promise<number> {
  const { json } = await restJson(context, path, query === '' ? 'dry_run=true' : `${query}&dry_run=true`);
  return (json as { cost: { units: number } }).cost.units;
}
