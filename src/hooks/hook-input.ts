import { paramsError, type ParamError } from '../api/api-error.js';
import type { Catalog } from '../catalog/load-catalog.js';
import { clipped } from '../clipped.js';

/** What fires a hook; each event names the rule (its index in `rules`) that fired. */
export type HookRule =
  | { type: 'landed' }
  | { type: 'revision'; minAbsPercent: number }
  | { type: 'threshold'; op: ThresholdOp; value: number }
  | { type: 'late'; graceMinutes: number };

export type ThresholdOp = '>' | '>=' | '<' | '<=';

/** Which series a hook hears of; a list left out means every metric, or every project. */
export interface HookFilter {
  metrics?: string[];
  projects?: string[];
}

/** A hook's settings, as created. */
export interface HookSettings {
  url: string;
  description: string;
  filter: HookFilter;
  rules: HookRule[];
}

/** The settings a PATCH changes: only those given. */
export type HookChanges = Partial<HookSettings> & { active?: boolean };

export const MAX_RULES = 10;
export const MAX_URL_LENGTH = 2000;
export const MAX_DESCRIPTION_LENGTH = 500;
const MAX_FILTER_ENTRIES = 100;
const RULE_TYPES = ['landed', 'revision', 'threshold', 'late'] as const;
const OPS = ['>', '>=', '<', '<='] as const;
const MAX_GRACE_MINUTES = 7 * 24 * 60;

/**
 * The one check of a hook's settings, shared by REST, GraphQL and the CLI: a new hook
 * (`url` and `rules` required) or the changes of an update. Every problem is reported,
 * each named by its path in the request (`url`, `rules[0].type`, `filter.metrics[2]`);
 * throws one 400 ApiError. The URL's scheme is checked here; where it points is checked
 * by `checkHookUrl` (it resolves the name).
 */
export function validateHookInput(input: unknown, mode: 'create', catalog: Catalog, allowHttp: boolean): HookSettings;
export function validateHookInput(input: unknown, mode: 'update', catalog: Catalog, allowHttp: boolean): HookChanges;
export function validateHookInput(
  input: unknown,
  mode: 'create' | 'update',
  catalog: Catalog,
  allowHttp: boolean,
): HookSettings | HookChanges {
  const problems: ParamError[] = [];
  const problem = (param: string, message: string) => problems.push({ param, message });
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw paramsError([{ param: 'request', message: `expected a JSON object, got ${describe(input)}` }]);
  }
  const body = input as Record<string, unknown>;
  const known = mode === 'create' ? CREATE_FIELDS : UPDATE_FIELDS;
  for (const key of Object.keys(body))
    if (!known.includes(key)) problem(clipped(key), `unknown field; expected ${known.join(', ')}`);
  const out: HookChanges = {};
  if (body.url !== undefined || mode === 'create') {
    const url = checkUrlText(body.url, allowHttp);
    if (typeof url === 'string' && url.startsWith('!')) problem('url', url.slice(1));
    else out.url = url;
  }
  if (body.description !== undefined) {
    if (typeof body.description !== 'string' || body.description.length > MAX_DESCRIPTION_LENGTH)
      problem('description', `expected text of at most ${MAX_DESCRIPTION_LENGTH} characters`);
    else out.description = body.description;
  } else if (mode === 'create') out.description = '';
  if (body.filter !== undefined && body.filter !== null) {
    const filter = checkFilter(body.filter, catalog, problem);
    if (filter !== undefined) out.filter = filter;
  } else if (mode === 'create' || body.filter === null) out.filter = {};
  if (body.rules !== undefined || mode === 'create') {
    const rules = checkRules(body.rules, problem);
    if (rules !== undefined) out.rules = rules;
  }
  if (body.active !== undefined) {
    if (typeof body.active !== 'boolean') problem('active', `expected true or false, got ${describe(body.active)}`);
    else out.active = body.active;
  }
  if (problems.length > 0) throw paramsError(problems);
  return out;
}

// Private

const CREATE_FIELDS = ['url', 'description', 'filter', 'rules'];
const UPDATE_FIELDS = [...CREATE_FIELDS, 'active'];

/** The URL, or its problem prefixed with `!`. */
function checkUrlText(value: unknown, allowHttp: boolean): string {
  if (typeof value !== 'string' || value === '') return `!expected an https:// URL, got ${describe(value)}`;
  if (value.length > MAX_URL_LENGTH) return `!expected a URL of at most ${MAX_URL_LENGTH} characters`;
  if (!URL.canParse(value)) return `!expected an https:// URL, got ${JSON.stringify(clipped(value))}`;
  const url = new URL(value);
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:'))
    return allowHttp
      ? `!expected an https:// or http:// URL, got ${url.protocol}`
      : `!expected an https:// URL, got ${url.protocol} (plain http:// only with HOOKS_ALLOW_PRIVATE=on)`;
  if (url.username !== '' || url.password !== '') return '!a hook URL may not carry a user name or password';
  if (url.hostname === '') return '!expected a URL with a host name';
  return url.toString();
}

function checkFilter(
  value: unknown,
  catalog: Catalog,
  problem: (param: string, message: string) => void,
): HookFilter | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problem('filter', `expected an object with "metrics" and/or "projects", got ${describe(value)}`);
    return undefined;
  }
  const filter = value as Record<string, unknown>;
  const out: HookFilter = {};
  let ok = true;
  for (const key of Object.keys(filter))
    if (key !== 'metrics' && key !== 'projects') {
      problem(`filter.${clipped(key)}`, 'unknown field; expected metrics, projects');
      ok = false;
    }
  const list = (key: 'metrics' | 'projects', known: (name: string) => boolean, what: string) => {
    const entries = filter[key];
    if (entries === undefined || entries === null) return;
    if (!Array.isArray(entries) || entries.length === 0 || entries.length > MAX_FILTER_ENTRIES) {
      problem(`filter.${key}`, `expected a list of 1 to ${MAX_FILTER_ENTRIES} ${what}, got ${describe(entries)}`);
      ok = false;
      return;
    }
    entries.forEach((entry, i) => {
      if (typeof entry !== 'string' || !known(entry)) {
        problem(`filter.${key}[${i}]`, `not a ${what.replace(/s$/, '')} of the catalog: ${describe(entry)}`);
        ok = false;
      }
    });
    out[key] = [...new Set(entries as string[])];
  };
  list('metrics', (name) => catalog.byName.has(name), 'metric names');
  list('projects', (slug) => catalog.allProjects.includes(slug), 'project slugs');
  return ok ? out : undefined;
}

function checkRules(value: unknown, problem: (param: string, message: string) => void): HookRule[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_RULES) {
    problem('rules', `expected a list of 1 to ${MAX_RULES} rules, got ${describe(value)}`);
    return undefined;
  }
  const rules: HookRule[] = [];
  let ok = true;
  for (const [i, raw] of (value as unknown[]).entries()) {
    const at = `rules[${i}]`;
    const fail = (param: string, message: string) => {
      ok = false;
      problem(param, message);
    };
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      fail(at, `expected a rule object such as {"type":"landed"}, got ${describe(raw)}`);
      continue;
    }
    const rule = raw as Record<string, unknown>;
    const allowed = ['type', ...(RULE_FIELDS[rule.type as string] ?? [])];
    if (!RULE_TYPES.includes(rule.type as (typeof RULE_TYPES)[number])) {
      fail(`${at}.type`, `expected one of ${RULE_TYPES.join(', ')}, got ${describe(rule.type)}`);
      continue;
    }
    for (const key of Object.keys(rule))
      if (!allowed.includes(key)) fail(`${at}.${clipped(key)}`, `not a field of a ${rule.type} rule`);
    switch (rule.type) {
      case 'landed':
        rules.push({ type: 'landed' });
        continue;
      case 'revision': {
        const p = rule.minAbsPercent ?? 0;
        if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p > 1_000_000) {
          fail(`${at}.minAbsPercent`, `expected a number from 0 to 1000000, got ${describe(p)}`);
          continue;
        }
        rules.push({ type: 'revision', minAbsPercent: p });
        continue;
      }
      case 'threshold': {
        if (!OPS.includes(rule.op as ThresholdOp))
          fail(`${at}.op`, `expected one of ${OPS.join(' ')}, got ${describe(rule.op)}`);
        if (typeof rule.value !== 'number' || !Number.isFinite(rule.value))
          fail(`${at}.value`, `expected a finite number, got ${describe(rule.value)}`);
        else if (OPS.includes(rule.op as ThresholdOp))
          rules.push({ type: 'threshold', op: rule.op as ThresholdOp, value: rule.value });
        continue;
      }
      case 'late': {
        const g = rule.graceMinutes ?? 60;
        if (typeof g !== 'number' || !Number.isInteger(g) || g < 0 || g > MAX_GRACE_MINUTES) {
          fail(`${at}.graceMinutes`, `expected a whole number from 0 to ${MAX_GRACE_MINUTES}, got ${describe(g)}`);
          continue;
        }
        rules.push({ type: 'late', graceMinutes: g });
        continue;
      }
    }
  }
  return ok ? rules : undefined;
}

const RULE_FIELDS: Record<string, string[]> = {
  landed: [],
  revision: ['minAbsPercent'],
  threshold: ['op', 'value'],
  late: ['graceMinutes'],
};

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return clipped(text);
}
