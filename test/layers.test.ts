/**
 * The dependency rules of `src/`, checked over its TypeScript import graph: every import (type-only,
 * re-exports and dynamic `import()` included) between the top-level folders of `src/` must go to the
 * folder's own layer or below, without a cycle; the README's layout table must list the same layers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The rules, in one place. `layers` runs top to bottom, as README's `## Layout` table lists them; a
 * top-level file of `src/` is a unit of its own. A unit imports from its own layer and the layers below,
 * never closing a cycle between units.
 */
const RULES = {
  layers: [
    { layer: 6, name: 'process', units: ['main.ts', 'start/', 'commands/'] },
    { layer: 5, name: 'app', units: ['app.ts', 'services.ts'] },
    { layer: 4, name: 'interfaces', units: ['rest/', 'graphql/', 'mcp/', 'pages/', 'ops/'] },
    { layer: 3, name: 'HTTP mechanics', units: ['http/'] },
    { layer: 2, name: 'policy', units: ['auth/', 'limits/', 'cache/'] },
    {
      layer: 1,
      name: 'domain',
      units: [
        'series/',
        'analytics/',
        'formula/',
        'revisions/',
        'changes/',
        'import/',
        'seed/',
        'sync/',
        'live/',
        'hooks/',
      ],
    },
    {
      layer: 0,
      name: 'ground',
      units: [
        'db/',
        'catalog/',
        'api/',
        'config.ts',
        'log.ts',
        'dates.ts',
        'clipped.ts',
        'counted.ts',
        'package-root.ts',
        'log-blocks.ts',
        'progress-line.ts',
      ],
    },
  ],
  /** The interface folders' layer: none of its units imports another. */
  apartLayer: 4,
  /** HTTP mechanics: no route (nothing of a higher layer) and not the composition root. */
  mechanics: { unit: 'http/', never: ['services.ts', 'app.ts'] },
  /** The stores: nothing above the ground layer. */
  ground: { unit: 'db/', highestLayer: 0 },
} as const;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

describe('the layers of src/', () => {
  const graph = importGraph(SRC);
  const layerOf = new Map<string, number>(RULES.layers.flatMap((row) => row.units.map((u) => [u, row.layer] as const)));
  /** Whether `unit` sits in a higher layer than `other` (units in no row are reported by the first test). */
  const isAbove = (unit: string, other: string) => (layerOf.get(unit) ?? -1) > (layerOf.get(other) ?? Infinity);

  it('places every file of src/ in a row of the table', () => {
    const unplaced = [...new Set(graph.files.map(unitOf))].filter((unit) => !layerOf.has(unit));
    expect(unplaced, 'top-level folders or files of src/ missing from RULES.layers').toEqual([]);
  });

  it('resolves every relative import to a file of src/', () => {
    expect(graph.unresolved).toEqual([]);
  });

  it('imports only from the same layer or below', () => {
    const upward = graph.edges
      .filter((e) => isAbove(e.toUnit, e.fromUnit))
      .map((e) => `${describeEdge(e)} (layer ${layerOf.get(e.fromUnit)} → ${layerOf.get(e.toUnit)})`);
    expect(upward).toEqual([]);
  });

  it('keeps the interface folders apart', () => {
    const across = graph.edges
      .filter((e) => e.fromUnit !== e.toUnit)
      .filter((e) => layerOf.get(e.fromUnit) === RULES.apartLayer && layerOf.get(e.toUnit) === RULES.apartLayer)
      .map(describeEdge);
    expect(across).toEqual([]);
  });

  it('keeps routes and services out of http/', () => {
    const routes = graph.edges
      .filter((e) => e.fromUnit === RULES.mechanics.unit)
      .filter((e) => RULES.mechanics.never.some((u) => u === e.toUnit) || isAbove(e.toUnit, RULES.mechanics.unit))
      .map(describeEdge);
    expect(routes).toEqual([]);
  });

  it('keeps db/ at the ground', () => {
    const above = graph.edges
      .filter((e) => e.fromUnit === RULES.ground.unit)
      .filter((e) => (layerOf.get(e.toUnit) ?? Infinity) > RULES.ground.highestLayer)
      .map(describeEdge);
    expect(above).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    expect(folderCycles(graph.edges).map((cycle) => describeCycle(cycle, graph.edges))).toEqual([]);
  });

  it('is the table README.md shows under ## Layout', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const expected = RULES.layers.map((row) => ({ layer: `${row.layer} ${row.name}`, units: [...row.units] }));
    expect(layoutRows(readme), "the rows of README.md's layout table").toEqual(expected);
  });
});

// Private

interface Edge {
  from: string;
  to: string;
  fromUnit: string;
  toUnit: string;
  specifier: string;
}

/** Every import between files of `src/`, relative specifiers resolved (`./x.js` → `x.ts`). */
function importGraph(src: string): { files: string[]; edges: Edge[]; unresolved: string[] } {
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(src, join(d.parentPath, d.name)).split(sep).join('/'))
    .sort();
  const known = new Set(files);
  const edges: Edge[] = [];
  const unresolved: string[] = [];
  for (const from of files.filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(join(src, from), 'utf8');
    const { importedFiles } = ts.preProcessFile(text, true, true);
    for (const { fileName: specifier } of importedFiles) {
      if (!specifier.startsWith('.')) continue;
      const target = relative(src, resolve(join(src, dirname(from)), specifier))
        .split(sep)
        .join('/');
      const to = [target.replace(/\.js$/, '.ts'), target, `${target}/index.ts`].find((f) => known.has(f));
      if (to === undefined) {
        unresolved.push(`src/${from}: '${specifier}'`);
        continue;
      }
      edges.push({ from, to, fromUnit: unitOf(from), toUnit: unitOf(to), specifier });
    }
  }
  return { files, edges, unresolved };
}

/** `series/read-series.ts` → `series/`; `app.ts` → `app.ts`. */
function unitOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file : file.slice(0, slash + 1);
}

function describeEdge(e: Edge): string {
  return `src/${e.from} imports '${e.specifier}' (src/${e.to})`;
}

/** The strongly connected groups of two or more folders (Tarjan), each a set of folders that import one another. */
function folderCycles(edges: Edge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) {
    if (e.fromUnit === e.toUnit) continue;
    if (!next.has(e.fromUnit)) next.set(e.fromUnit, new Set());
    next.get(e.fromUnit)!.add(e.toUnit);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return groups;
}

/** A cycle named by the imports that make it: every edge between two folders of the group. */
function describeCycle(group: string[], edges: Edge[]): string {
  const inside = edges.filter((e) => e.fromUnit !== e.toUnit && group.includes(e.fromUnit) && group.includes(e.toUnit));
  return `cycle between ${group.join(', ')}:\n  ${inside.map(describeEdge).join('\n  ')}`;
}

/** The rows of the table under `## Layout`: the layer (`6 process`) and the backticked names of its folders. */
function layoutRows(readme: string): { layer: string; units: string[] }[] {
  const section = readme.split(/^## /m).find((s) => s.startsWith('Layout\n'));
  if (section === undefined) throw new Error('README.md has no "## Layout" section');
  const rows = section
    .split('\n')
    .filter((line) => line.trimStart().startsWith('|'))
    .map((line) =>
      line
        .trim()
        .replace(/^\||\|$/g, '')
        .split('|')
        .map((cell) => cell.trim()),
    )
    .filter((cells) => /^\d+\b/.test(cells[0] ?? ''));
  return rows.map((cells) => ({
    layer: cells[0]!,
    units: [...(cells[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!),
  }));
}
